/** Maps engine events onto stdout/stderr for `crystal run` in its three formats (CLI-2). */
import type { ControllerEvent, StopReason, TurnResult } from '@crystal/engine';
import type { RunFormat } from './run-options.js';

export interface OutputStreams {
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stderr: NodeJS.WritableStream;
}

export function exitCodeFor(result: TurnResult): number {
  return exitCodeForStop(result.stopReason, result.denied);
}

/** Exit codes of CLI-2: a failure, budget stop or interrupt outranks a denial. */
export function exitCodeForStop(stop: StopReason, denied: boolean): number {
  switch (stop) {
    case 'completed':
      return denied ? 4 : 0;
    case 'failed':
    case 'content_filtered':
      return 2;
    case 'interrupted':
      return 5;
    default:
      return 3;
  }
}

export function resultObject(result: TurnResult): Record<string, unknown> {
  return {
    sessionId: result.sessionId,
    stopReason: result.stopReason,
    text: result.text,
    usage: { inputTokens: result.usage.inputTokens, outputTokens: result.usage.outputTokens },
    modelCalls: result.modelCalls,
    toolCalls: result.toolCalls.map((c) => ({ name: c.name, arguments: c.arguments, status: c.status })),
    retries: result.retries,
    ...(result.error ? { error: result.error.message } : {}),
  };
}

export function resumeHint(sessionId: string): string {
  return `Session ${sessionId} saved. Continue it with: crystal run --resume ${sessionId}`;
}

export interface RunPrinter {
  onEvent(event: ControllerEvent): void;
  finish(result: TurnResult): void;
}

export function createPrinter(format: RunFormat, out: OutputStreams, showThinking: boolean, sessionId: string): RunPrinter {
  if (format === 'json') return jsonPrinter(out);
  if (format === 'stream-json') return streamJsonPrinter(out, showThinking, sessionId);
  return textPrinter(out, showThinking);
}

function jsonPrinter(out: OutputStreams): RunPrinter {
  return {
    onEvent(event) {
      if (event.type === 'retry-scheduled') {
        out.stderr.write(
          `retrying model request: ${event.message} (attempt ${event.attempt} in ${Math.ceil(event.delayMs / 1000)}s)\n`,
        );
      } else if (event.type === 'note') out.stderr.write(`${event.text}\n`);
    },
    finish(result) {
      out.stdout.write(`${JSON.stringify(resultObject(result))}\n`);
      if (result.error) out.stderr.write(`crystal: ${result.error.message}\n`);
    },
  };
}

function streamJsonPrinter(out: OutputStreams, showThinking: boolean, sessionId: string): RunPrinter {
  const line = (type: string, fields: Record<string, unknown>): void => {
    out.stdout.write(`${JSON.stringify({ type, timestamp: new Date().toISOString(), sessionId, ...fields })}\n`);
  };
  return {
    onEvent(event) {
      switch (event.type) {
        case 'text-delta':
          line('text', { text: event.text });
          break;
        case 'reasoning-delta':
          if (showThinking) line('reasoning', { text: event.text });
          break;
        case 'attempt-discarded':
          line('note', { text: 'The partial reply of the failed attempt is discarded.', discard: true, round: event.round });
          break;
        case 'retry-scheduled':
          line('retry', { attempt: event.attempt, delayMs: event.delayMs, reason: event.reason, message: event.message });
          break;
        case 'tool-results':
          for (const r of event.results) {
            line('tool_use', {
              callId: r.callId,
              name: r.name,
              status: r.isError ? 'failure' : 'success',
              output: r.content.map((c) => (c.type === 'text' ? c.text : '')).join(''),
            });
          }
          break;
        case 'round-closed':
          line('step_finish', { reason: event.finish, ...(event.usage ? { usage: event.usage } : {}) });
          break;
        case 'note':
          line('note', { text: event.text });
          break;
        case 'error':
          line('error', { message: event.message, ...(event.kind ? { kind: event.kind } : {}) });
          break;
        default:
          break;
      }
    },
    finish(result) {
      line('result', resultObject(result));
    },
  };
}

/**
 * Plain text. On a terminal the reply streams as it arrives; into a pipe each round's text is
 * written once its stream completed, so a failed attempt's partial text never reaches stdout.
 */
function textPrinter(out: OutputStreams, showThinking: boolean): RunPrinter {
  const live = out.stdout.isTTY === true;
  let pending = '';
  let wroteText = false;
  let lastChar = '\n';
  const write = (value: string): void => {
    if (value === '') return;
    out.stdout.write(value);
    wroteText = true;
    lastChar = value.at(-1) as string;
  };
  return {
    onEvent(event) {
      switch (event.type) {
        case 'text-delta':
          if (live) write(event.text);
          else pending += event.text;
          break;
        case 'reasoning-delta':
          if (showThinking) out.stderr.write(event.text);
          break;
        case 'attempt-discarded':
          pending = '';
          if (live && wroteText) write('\n[discarded: the attempt failed and is retried]\n');
          break;
        case 'round-closed':
          write(pending);
          pending = '';
          break;
        case 'retry-scheduled':
          out.stderr.write(
            `retrying model request: ${event.message} (attempt ${event.attempt} in ${Math.ceil(event.delayMs / 1000)}s)\n`,
          );
          break;
        case 'tool-calls':
          if (lastChar !== '\n') write('\n');
          for (const call of event.calls) write(`[${call.name}] ${truncate(call.arguments, 120)}\n`);
          break;
        case 'tool-results':
          for (const r of event.results) {
            const text = r.content.map((c) => (c.type === 'text' ? c.text : `[image ${c.mime}]`)).join('');
            const lines = text.split('\n');
            const head = lines
              .slice(0, 4)
              .map((l) => `  ${truncate(l, 160)}`)
              .join('\n');
            const more = lines.length > 4 ? `\n  <${lines.length - 4} more lines>` : '';
            write(`(${r.isError ? 'failure' : 'success'})\n${head}${more}\n`);
          }
          break;
        case 'error':
          out.stderr.write(`crystal: ${event.message}\n`);
          break;
        case 'note':
          out.stderr.write(`${event.text}\n`);
          break;
        default:
          break;
      }
    },
    finish(result) {
      if (lastChar !== '\n') write('\n');
      if (result.stopReason !== 'completed') write(`[Stopped] ${result.stopReason}\n`);
      write(`${resumeHint(result.sessionId)}\n`);
    },
  };
}

function truncate(value: string, max: number): string {
  return value.length <= max ? value : `${value.slice(0, max)}…`;
}
