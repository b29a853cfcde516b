/** Real processes, real mounts and real files for the durability tests (REL-*). */
import { type ChildProcessWithoutNullStreams, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crystalBin, tempDir } from '@crystal/testkit';

export interface Crystal {
  readonly child: ChildProcessWithoutNullStreams;
  stdout: string;
  stderr: string;
  readonly closed: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves once stdout or stderr holds `pattern`. */
  waitFor(pattern: RegExp | string): Promise<void>;
}

/** Starts the real `crystal` binary (clean environment, Home in CRYSTAL_HOME). */
export function startCrystal(args: readonly string[], home: string, cwd = tempDir('crystal-ws-')): Crystal {
  const env: Record<string, string> = {};
  for (const key of ['PATH', 'LANG', 'TERM']) if (process.env[key]) env[key] = process.env[key] as string;
  env.HOME = tempDir('crystal-nohome-');
  env.CRYSTAL_HOME = home;
  const child = spawn(process.execPath, [crystalBin, ...args], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
  const waiters: { pattern: RegExp | string; resolve: () => void }[] = [];
  const check = (): void => {
    for (const w of [...waiters]) {
      const text = `${handle.stdout}\n${handle.stderr}`;
      if (typeof w.pattern === 'string' ? text.includes(w.pattern) : w.pattern.test(text)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  const handle: Crystal = {
    child,
    stdout: '',
    stderr: '',
    closed: new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal }))),
    waitFor: (pattern) =>
      new Promise<void>((resolve) => {
        waiters.push({ pattern, resolve });
        check();
      }),
  };
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    handle.stdout += chunk;
    check();
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    handle.stderr += chunk;
    check();
  });
  return handle;
}

/** Polls (without any timed assertion) until `condition` holds. */
export async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** Whether this process may mount file systems (root); otherwise the reason, printed by the test. */
export function mountUnavailable(): string | undefined {
  if (process.platform !== 'linux') return `mount tests need Linux (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return 'mount tests need root (tmpfs and read-only bind mounts); run them as root or in CI';
  const probe = tempDir('crystal-mount-probe-');
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe], { stdio: 'pipe' });
    execFileSync('umount', [probe], { stdio: 'pipe' });
    return undefined;
  } catch (error) {
    return `mount is not permitted here: ${(error as Error).message.split('\n')[0]}`;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}

/** A tiny tmpfs (a real disk that fills up). */
export function mountTmpfs(sizeKb: number): { path: string; unmount(): void } {
  const path = tempDir('crystal-tmpfs-');
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeKb}k`, 'tmpfs', path]);
  return {
    path,
    unmount: () => {
      execFileSync('umount', ['-l', path]);
      rmSync(path, { recursive: true, force: true });
    },
  };
}

/** A read-only view of `source` (bind mount, remounted read-only). */
export function mountReadOnly(source: string): { path: string; unmount(): void } {
  const path = tempDir('crystal-ro-');
  execFileSync('mount', ['--bind', source, path]);
  execFileSync('mount', ['-o', 'remount,ro,bind', path]);
  return {
    path,
    unmount: () => {
      execFileSync('umount', ['-l', path]);
      rmSync(path, { recursive: true, force: true });
    },
  };
}

/** Fills the file system holding `dir` to the last byte; returns the filler's path. */
export function fillDisk(dir: string): string {
  const filler = join(dir, 'filler.bin');
  const chunk = Buffer.alloc(4096, 1);
  writeFileSync(filler, '');
  for (;;) {
    try {
      writeFileSync(filler, chunk, { flag: 'a' });
    } catch {
      break;
    }
  }
  // Fill the last partial page too.
  for (;;) {
    try {
      writeFileSync(filler, 'x', { flag: 'a' });
    } catch {
      break;
    }
  }
  return filler;
}

export function writeHomeConfig(home: string, config: unknown): void {
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, 'config.json'), JSON.stringify(config, null, 2));
}

export function sessionIds(home: string): string[] {
  try {
    return readdirSync(join(home, 'sessions'))
      .filter((f) => f.endsWith('.json') && !f.startsWith('.'))
      .map((f) => f.slice(0, -5));
  } catch {
    return [];
  }
}

export function headOf(home: string, id: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(home, 'sessions', `${id}.json`), 'utf8')) as Record<string, unknown>;
}

/** Runs the real binary as an unprivileged user (root ignores permission bits, so chmod tests need one). */
export function runCrystalAs(
  uid: number,
  args: readonly string[],
  home: string,
  cwd: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: home, CRYSTAL_HOME: home };
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [crystalBin, ...args], { cwd, env, uid, gid: uid, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The uid of `nobody` when this process may switch to it (root on Linux), else the reason it cannot. */
export function unprivilegedUid(): number | string {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return 'chmod tests need root to run the binary as nobody';
  try {
    return Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).trim());
  } catch {
    return 'no user nobody to run the binary as';
  }
}
