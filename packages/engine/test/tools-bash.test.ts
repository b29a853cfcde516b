import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ParsedToolCall, ToolExecutor } from '@crystal/core';
import { afterEach, describe, expect, it } from 'vitest';
import { createBuiltinTools } from '../src/tools/catalog.js';
import { builtinExceptionMapper, type ToolHost, TodoStore } from '../src/tools/builtin/index.js';
import { effectiveTimeout } from '../src/tools/builtin/bash.js';

function host(overrides: Partial<ToolHost> = {}): ToolHost {
  return {
    workspace: mkdtempSync(join(tmpdir(), 'crystal-bash-')),
    bashTimeoutMs: 600_000,
    todos: new TodoStore(),
    ...overrides,
  };
}

async function bash(h: ToolHost, input: unknown, signal = new AbortController().signal) {
  const executor = new ToolExecutor({ tools: createBuiltinTools(h), mapException: builtinExceptionMapper });
  const call: ParsedToolCall = { id: 'call-1', name: 'bash', arguments: JSON.stringify(input), input };
  const [result] = await executor.runBatch([call], signal);
  const text = result?.content.map((part) => (part.type === 'text' ? part.text : '')).join('') ?? '';
  return { text, isError: result?.isError ?? true };
}

/** Alive and not a zombie (a container's init may not reap orphans at once). */
/** A killed process can stay a zombie until it is reaped; poll briefly instead of racing the reaper. */
async function goneSoon(pid: number): Promise<boolean> {
  for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 50));
  return !alive(pid);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

const pidFiles: string[] = [];
afterEach(() => {
  // A failing kill test must not leave its sleeper behind for the rest of the run.
  for (const file of pidFiles.splice(0)) {
    try {
      process.kill(Number(readFileSync(file, 'utf8').trim()), 'SIGKILL');
    } catch {
      // Gone, as it should be.
    }
  }
});

function pidFileIn(workspace: string): string {
  const file = join(workspace, 'child.pid');
  pidFiles.push(file);
  return file;
}

async function pidFrom(file: string): Promise<number> {
  for (;;) {
    if (existsSync(file)) {
      const text = readFileSync(file, 'utf8').trim();
      if (text) return Number(text);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('bash tool', () => {
  it('TOOLS-2 runs bash in the workspace root and returns exit 0 with the output', async () => {
    const h = host();
    const result = await bash(h, { command: 'pwd; [[ 1 == 1 ]] && echo bash-syntax' });
    expect(result).toEqual({ text: `exit 0\n${h.workspace}\nbash-syntax\n`, isError: false });
    // stderr is part of the output too (its order against stdout is the pipes', not ours).
    expect(await bash(h, { command: 'echo err >&2' })).toEqual({ text: 'exit 0\nerr\n', isError: false });
  });

  it('TOOLS-2 a non-zero exit is a failure that still shows the code and the output', async () => {
    const result = await bash(host(), { command: 'echo broken; exit 3' });
    expect(result).toEqual({ text: 'exit 3\nbroken\n', isError: true });
  });

  it('TOOLS-2 streams output to the host as it arrives, tagged with the call id', async () => {
    const chunks: Array<[string, string]> = [];
    const h = host({ onOutput: (callId, chunk) => chunks.push([callId, chunk]) });
    await bash(h, { command: 'echo one; sleep 0.2; echo two' });
    expect(chunks.map(([id]) => id)).toEqual(chunks.map(() => 'call-1'));
    expect(chunks.map(([, c]) => c).join('')).toBe('one\ntwo\n');
    expect(chunks.length).toBeGreaterThanOrEqual(2);
  });

  it('TUIX-7 each streamed chunk says which stream it came from (surfaces show stderr apart); the result keeps both', async () => {
    const byStream: Record<string, string> = { stdout: '', stderr: '' };
    const h = host({ onOutput: (_id, chunk, stream) => (byStream[stream] += chunk) });
    const result = await bash(h, { command: 'echo out one; echo err one >&2; echo out two; echo err two >&2; exit 1' });
    expect(byStream).toEqual({ stdout: 'out one\nout two\n', stderr: 'err one\nerr two\n' });
    expect(result.isError).toBe(true);
    for (const line of ['out one', 'out two', 'err one', 'err two']) expect(result.text).toContain(line);
  });

  it('BASH-1 the configured timer stops the command with the reference message', async () => {
    const result = await bash(host({ bashTimeoutMs: 1000 }), { command: 'echo started; sleep 30' });
    expect(result.isError).toBe(true);
    expect(result.text).toBe('The command timed out after 1 seconds.\nstarted\n');
  });

  it('BASH-1 a null timer (unlimited) lets the command finish; the model may only shorten the timer', async () => {
    const result = await bash(host({ bashTimeoutMs: null }), { command: 'sleep 0.3; echo done' });
    expect(result).toEqual({ text: 'exit 0\ndone\n', isError: false });
    expect(effectiveTimeout(null, 5)).toBe(5000);
    expect(effectiveTimeout(10_000, 5)).toBe(5000);
    expect(effectiveTimeout(10_000, 50)).toBe(10_000);
    expect(effectiveTimeout(10_000, undefined)).toBe(10_000);
    const shortened = await bash(host({ bashTimeoutMs: 600_000 }), { command: 'sleep 30', timeout: 0.5 });
    expect(shortened.text).toBe('The command timed out after 0.5 seconds.');
  });

  it('BASH-2 a timeout kills the whole process group, a forked child that ignores SIGTERM included', async () => {
    const h = host({ bashTimeoutMs: 1000 });
    const pidFile = pidFileIn(h.workspace);
    const result = await bash(h, { command: `bash -c 'trap "" TERM; echo $$ > child.pid; exec sleep 300' & wait` });
    expect(result.text).toContain('The command timed out after 1 seconds.');
    const pid = await pidFrom(pidFile);
    expect(await goneSoon(pid)).toBe(true);
  });

  it('BASH-2 a timeout also kills a background child that outlived the shell and holds its output open', async () => {
    const h = host({ bashTimeoutMs: 1000 });
    const pidFile = pidFileIn(h.workspace);
    const result = await bash(h, { command: `bash -c 'trap "" TERM; echo $$ > child.pid; exec sleep 300' & echo started` });
    expect(result.text).toContain('started');
    const pid = await pidFrom(pidFile);
    expect(await goneSoon(pid)).toBe(true);
  });

  it('BASH-2 a user cancel kills the whole process group, a child that ignores SIGTERM included', async () => {
    const controller = new AbortController();
    const h = host({
      onOutput: (_id, chunk) => {
        if (chunk.includes('ready')) controller.abort();
      },
    });
    const pidFile = pidFileIn(h.workspace);
    const result = await bash(
      h,
      { command: `bash -c 'trap "" TERM; echo $$ > child.pid; echo ready; exec sleep 300' & wait` },
      controller.signal,
    );
    expect(result.isError).toBe(true);
    expect(result.text).toContain('The command was cancelled.');
    const pid = await pidFrom(pidFile);
    expect(await goneSoon(pid)).toBe(true);
  });

  it('TOOLS-2 100 MB of output is capped in bounded memory and the cap is stated', async () => {
    let streamed = 0;
    const h = host({ onOutput: (_id, chunk) => (streamed += chunk.length) });
    const result = await bash(h, { command: 'head -c 100000000 /dev/zero | tr "\\0" x; echo; echo last-line' });
    expect(result.isError).toBe(false);
    expect(streamed).toBe(100_000_000 + 11);
    expect(result.text.length).toBeLessThan(100_000);
    expect(result.text.startsWith(`exit 0\n${'x'.repeat(1000)}`)).toBe(true);
    expect(result.text.endsWith('x\nlast-line\n')).toBe(true);
    const omitted = 100_000_011 - 80_000;
    expect(result.text).toContain(
      `[... ${omitted} characters of output omitted; the output cap keeps the first 40000 and the last 40000 characters ...]`,
    );
  });

  it('TOOLS-2 a bad argument type is a model-visible error naming the field', async () => {
    expect(await bash(host(), { command: 42 })).toEqual({
      text: "Invalid argument 'command' for 'bash': expected string, received number.",
      isError: true,
    });
    expect((await bash(host(), {})).text).toBe("Missing argument 'command' for 'bash': expected string.");
  });
});
