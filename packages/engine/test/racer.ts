/**
 * SEC-4 race tests share one real racing process: it swaps `ws/d` between the real folder and a
 * link to `outside` in a loop until it is killed, holding each state for a fraction of a
 * millisecond so that both the swaps and the calls between them happen.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, lstatSync, renameSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { type ParsedToolCall, ToolExecutor } from '@crystal/core';
import { type ApprovalMode, createApprovalPolicy } from '../src/approval/index.js';
import { builtinExceptionMapper, TodoStore } from '../src/tools/builtin/index.js';
import { createBuiltinTools } from '../src/tools/catalog.js';

let racer: ChildProcess | undefined;

/** Starts the racer; resolves once the first swap has happened. */
export async function startRacer(ws: string, outside: string, holdMs = 0.2): Promise<void> {
  const script = `
    const fs = require('node:fs');
    process.chdir(${JSON.stringify(ws)});
    const pause = new Int32Array(new SharedArrayBuffer(4));
    let first = true;
    for (;;) {
      try { fs.renameSync('d', 'd.real'); fs.symlinkSync(${JSON.stringify(outside)}, 'd'); } catch {}
      if (first) { process.stdout.write('racing\\n'); first = false; }
      Atomics.wait(pause, 0, 0, ${holdMs});
      try { fs.unlinkSync('d'); fs.renameSync('d.real', 'd'); } catch {}
      Atomics.wait(pause, 0, 0, ${holdMs});
    }`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  racer = child;
  await new Promise<void>((resolve, reject) => {
    child.stdout?.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`the racer exited early (${code})`)));
  });
}

/** For `afterEach`: kills the racer if one is left. */
export function killRacer(): void {
  racer?.kill('SIGKILL');
  racer = undefined;
}

/** Kills the racer, waits for it to exit and puts `ws/d` back as the real folder. */
export async function stopRacer(ws: string): Promise<void> {
  const stopped = racer;
  racer = undefined;
  stopped?.kill('SIGKILL');
  await new Promise((resolve) =>
    !stopped || stopped.exitCode !== null || stopped.signalCode !== null ? resolve(undefined) : stopped.once('exit', resolve),
  );
  if (lstatSync(join(ws, 'd'), { throwIfNoEntry: false })?.isSymbolicLink()) unlinkSync(join(ws, 'd'));
  if (!existsSync(join(ws, 'd'))) renameSync(join(ws, 'd.real'), join(ws, 'd'));
}

/** The real policy (no operator: an outside call is denied, as in `crystal run`) and the real tools. */
export function raceExecutor(mode: ApprovalMode, ws: string, home: string, rgPath: string | null = null): ToolExecutor {
  const policy = createApprovalPolicy({ mode, plan: () => false, workspace: ws, home });
  const tools = createBuiltinTools({
    workspace: ws,
    home,
    bashTimeoutMs: null,
    todos: new TodoStore(),
    rgPath,
    checkedPath: (callId) => policy.checkedPath(callId),
  });
  return new ToolExecutor({ tools, policy, mapException: builtinExceptionMapper });
}

let id = 0;
export const raceCall = (name: string, input: Record<string, unknown>): ParsedToolCall => ({
  id: `r${++id}`,
  name,
  arguments: JSON.stringify(input),
  input,
});
