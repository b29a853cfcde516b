/**
 * `spawn` and `execFile` with node:child_process loaded at the first call (issue 22 item 4): the
 * sandbox module loads with the engine, but a turn that runs no command starts no probe and no
 * bridge, so it need not load node:child_process. (The engine has the same pair in
 * engine/src/tools/lazy-child-process.ts; this package imports nothing of ours.)
 */
import { createRequire } from 'node:module';

type ChildProcessModule = typeof import('node:child_process');
export type { ChildProcess } from 'node:child_process';

let loaded: ChildProcessModule | undefined;
const childProcess = (): ChildProcessModule => {
  // process.getBuiltinModule on Node 20.16+: node:module (createRequire) need not load (issue 22).
  const getBuiltin = (process as { getBuiltinModule?: (name: string) => unknown }).getBuiltinModule;
  loaded ??= (
    getBuiltin ? getBuiltin.call(process, 'node:child_process') : createRequire(import.meta.url)('node:child_process')
  ) as ChildProcessModule;
  return loaded;
};

export const spawn = ((...args: Parameters<ChildProcessModule['spawn']>) =>
  childProcess().spawn(...args)) as ChildProcessModule['spawn'];

export const execFile = ((...args: Parameters<ChildProcessModule['execFile']>) =>
  childProcess().execFile(...args)) as ChildProcessModule['execFile'];
