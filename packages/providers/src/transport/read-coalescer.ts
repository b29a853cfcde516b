/**
 * Read coalescing for a streamed reply (issue 22: streaming CPU per 1,000 tokens ≤ 1.1x the
 * node:http floor). A provider paced at a token every few milliseconds costs one socket read per
 * frame: one event-loop wake-up, one parse of the HTTP chunk, one trip through the frame decoder
 * and the engine. Measured on a 20,000-token reply at 500 tokens/s, most of that CPU is the
 * wake-ups, not JavaScript. So while frames come fast, the socket is not read for a short window
 * after each read; the kernel buffers the frames meanwhile and the next read takes them all.
 *
 * The rules, in order:
 * - A read is always handed on at once; only the reads after it may wait.
 * - The first PROMPT_READS reads after the response's headers, and after any quiet gap (no read
 *   for at least the window), open no window: the frames before the first text (a role frame;
 *   Anthropic's message_start, content_block_start, ping) and the first text itself are never
 *   held back, so time to first token does not grow, nor after a long think or a tool call.
 *   A slow stream (a token every 20 ms or more) is all quiet gaps and reads as before.
 * - A batch of reads (all that one wake-up drained) of SMALL_BATCH_BYTES or more opens no window:
 *   data is arriving faster than it is read, the kernel coalesces by itself, and pausing would
 *   only cost throughput (an unpaced 2,000-token reply arrives in a few 64 KiB reads).
 * - The window is decided after the wake-up's reads are done (setImmediate), so the socket is
 *   drained first and never stopped in the middle of what the kernel already holds.
 * - Ending the reply (its end, a close, an error, an abort, the owner's close()) reads again at
 *   once: an abort never waits for the window, and a keep-alive socket goes back to the agent
 *   reading.
 *
 * Why 33 ms: the terminal paints at most every 33 ms (tui FRAME_MS), so one read per painted frame
 * loses nothing on screen; the last frames of a paced reply wait at most 33 ms. The cost of a read
 * (a wake-up, the socket's handle started and stopped, a timer, the HTTP parser, the frame
 * decoder's and the engine's work per batch) is paid per window, so per 1,000 tokens it weighs
 * more the slower the model streams. At 500 tokens/s (a token every 2 ms, the pace of
 * bench/tui-figures.mjs) a 16 ms window gathered eight frames and left the terminal at 1.12-1.25x
 * the node:http floor (issue 22's goal: 1.1x). Measured, the same build with 16 and 33 ms, runs
 * interleaved (CPU per 1,000 tokens, this VM): `crystal run` at a token every 2 ms 93 against 63
 * ms, at a token every ms 63 against 43 ms; the full-screen terminal at a token every 2 ms
 * 128-132 against 92-106 ms. Earlier, at a token per ms against the floor (bench/stream-cpu.mjs):
 * no window 1.10-1.19x, 8 ms 0.58-0.64x, 16 ms 0.43-0.46x, 33 ms 0.37x. A constant, not a
 * setting: what a user sees of it is at most one frame's wait for a paced reply's last frames.
 *
 * It works on the socket's own handle (readStop / readStart on the libuv TCP stream; for https the
 * TCP handle under the TLS wrap, whose own readStop leaves the TCP reads running), since
 * `socket.pause()` only stops 'data' events while the socket goes on reading. These are Node's
 * private handle methods (the ones net.Socket itself calls for back-pressure); where a handle
 * lacks them (another socket type, another Node), the stream is read as before, and
 * test/read-coalescer.test.ts fails on the read counts if coalescing silently stops working.
 */
import type { IncomingMessage } from 'node:http';
import { monotonicMs } from '@crystal/core';

export const COALESCE_WINDOW_MS = 33;
export const SMALL_BATCH_BYTES = 16 * 1024;
export const PROMPT_READS = 4;

interface StreamHandle {
  reading?: boolean;
  /** A TLS socket's TCP handle (the TLS wrap's own readStop does not stop the TCP reads). */
  _parent?: StreamHandle | null;
  readStart(): number;
  readStop(): number;
}

const readable = (handle: StreamHandle | null | undefined): handle is StreamHandle =>
  !!handle && typeof handle.readStop === 'function' && typeof handle.readStart === 'function';

export interface ReadCoalescer {
  /** Reads again now and stops pausing (the reply is done with: drained, reused or destroyed). */
  release(): void;
  /** Whether the socket is not being read now (inside a window). */
  readonly paused: boolean;
  /** How many windows there were. */
  readonly pauses: number;
}

const NONE: ReadCoalescer = { release() {}, paused: false, pauses: 0 };

export function coalesceReads(res: IncomingMessage, windowMs = COALESCE_WINDOW_MS): ReadCoalescer {
  const socket = res.socket;
  /** The socket's handle as Node's net layer keeps it (its `reading` flag is Node's own). */
  const outerOf = (): StreamHandle | undefined => {
    const handle = (socket as unknown as { _handle?: StreamHandle } | null)?._handle;
    return readable(handle) ? handle : undefined;
  };
  /** The handle whose reads reach the kernel: the TCP handle under a TLS wrap, else the handle itself. */
  const handleOf = (): StreamHandle | undefined => {
    const outer = outerOf();
    return outer && readable(outer._parent) ? outer._parent : outer;
  };
  if (!socket || !handleOf()) return NONE;
  let done = false;
  let batch = 0;
  let lastActive = monotonicMs();
  let quietBatch = false;
  /** Reads (batches) since the headers or the last quiet gap. */
  let streak = 0;
  let decision: NodeJS.Immediate | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped: StreamHandle | undefined;
  let pauses = 0;

  const resume = (): void => {
    timer = undefined;
    const handle = stopped;
    stopped = undefined;
    lastActive = monotonicMs();
    // Node keeps `reading` true while we hold the handle; false means Node stopped it itself
    // (its buffer is full) and will start it again when that is read.
    if (handle && outerOf()?.reading !== false && !socket.destroyed && handleOf() === handle) handle.readStart();
  };
  const decide = (): void => {
    decision = undefined;
    const small = batch < SMALL_BATCH_BYTES;
    const quiet = quietBatch;
    batch = 0;
    quietBatch = false;
    lastActive = monotonicMs();
    streak = quiet ? 1 : streak + 1;
    if (done || !small || streak <= PROMPT_READS || socket.destroyed) return;
    const handle = handleOf();
    if (!handle || outerOf()?.reading === false) return;
    handle.readStop();
    stopped = handle;
    pauses++;
    timer = setTimeout(resume, windowMs);
  };
  const onData = (chunk: Uint8Array): void => {
    if (done) return;
    if (decision === undefined) {
      // The first read of a wake-up; after a quiet gap the prompt reads start again.
      quietBatch = monotonicMs() - lastActive >= windowMs;
      decision = setImmediate(decide);
    }
    batch += chunk.length;
  };
  const release = (): void => {
    if (done) return;
    done = true;
    socket.off('data', onData);
    if (decision) clearImmediate(decision);
    decision = undefined;
    if (timer) clearTimeout(timer);
    if (stopped) resume();
  };
  socket.on('data', onData);
  res.once('end', release);
  res.once('close', release);
  res.once('error', release);
  return {
    release,
    get paused() {
      return stopped !== undefined;
    },
    get pauses() {
      return pauses;
    },
  };
}
