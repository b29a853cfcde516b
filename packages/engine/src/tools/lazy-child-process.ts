/**
 * `spawn` and `execFile` with node:child_process loaded at the first call (issue 22 item 4): a
 * turn that runs no command (no bash, hook, ripgrep, exec tool or clipboard tool) never loads it.
 * Same signatures as node:child_process; the files that start processes import these instead.
 */
import { lazyBuiltin } from '@crystal/core';

type ChildProcessModule = typeof import('node:child_process');
export type { ChildProcess } from 'node:child_process';

const childProcess = lazyBuiltin<ChildProcessModule>('node:child_process');

export const spawn = ((...args: Parameters<ChildProcessModule['spawn']>) =>
  childProcess().spawn(...args)) as ChildProcessModule['spawn'];

export const execFile = ((...args: Parameters<ChildProcessModule['execFile']>) =>
  childProcess().execFile(...args)) as ChildProcessModule['execFile'];
