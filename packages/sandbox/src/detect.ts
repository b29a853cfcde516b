/**
 * Whether this machine can sandbox a command (SBX-2): Linux, a `bwrap` (bubblewrap) binary, and
 * namespaces it may create. `CRYSTAL_BWRAP` names the binary (an empty value turns detection off);
 * otherwise `bwrap` is looked up on PATH. The answer comes from running bwrap once with the same
 * namespaces a real call uses, so "available" means a real call will start.
 */
import { execFile } from './child-process.js';
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

export type SandboxAvailability =
  | {
      readonly available: true;
      readonly bwrap: string;
      /** This bwrap takes `--size` for a tmpfs (0.8 and later), so the private /tmp can be capped. */
      readonly tmpfsSize: boolean;
    }
  | { readonly available: false; readonly reason: string };

export interface DetectOptions {
  readonly env?: NodeJS.ProcessEnv;
  readonly platform?: NodeJS.Platform;
}

const probes = new Map<string, Promise<SandboxAvailability>>();

export function detectSandbox(options: DetectOptions = {}): Promise<SandboxAvailability> {
  const found = findSandbox(options);
  return 'bwrap' in found ? probeSandbox(found.bwrap) : Promise.resolve(found);
}

/**
 * What can be told without starting a process (issue 22 item 4): not Linux, `CRYSTAL_BWRAP`
 * empty or not an executable, no `bwrap` on PATH (each with its reason); otherwise the bwrap
 * binary that `probeSandbox` must still try.
 */
export function findSandbox(
  options: DetectOptions = {},
): { readonly bwrap: string } | (SandboxAvailability & { available: false }) {
  const env = options.env ?? process.env;
  const platform = options.platform ?? process.platform;
  if (platform !== 'linux') {
    return { available: false, reason: `the OS sandbox needs Linux with bubblewrap; this is ${platform}` };
  }
  const override = env.CRYSTAL_BWRAP;
  if (override !== undefined) {
    if (override === '') return { available: false, reason: 'CRYSTAL_BWRAP is set to an empty value' };
    if (!isExecutable(override)) {
      return { available: false, reason: `CRYSTAL_BWRAP names ${override}, which is not an executable file` };
    }
    return { bwrap: override };
  }
  const found = onPath('bwrap', env.PATH ?? '');
  if (!found) {
    return {
      available: false,
      reason: 'bubblewrap (bwrap) is not installed; install the bubblewrap package to sandbox shell commands',
    };
  }
  return { bwrap: found };
}

/** Runs `bwrap` once (per binary and process) to learn whether it can create a sandbox here. */
export function probeSandbox(bwrap: string): Promise<SandboxAvailability> {
  return probeOnce(bwrap);
}

function probeOnce(bwrap: string): Promise<SandboxAvailability> {
  let probe = probes.get(bwrap);
  if (!probe) {
    probe = runProbe(bwrap);
    probes.set(bwrap, probe);
  }
  return probe;
}

/**
 * One bwrap run in the common case (issue 22 item 4: each spawn costs start-up time): the probe
 * asks for a sized tmpfs too, which a bwrap of 0.8 or later that can create namespaces starts;
 * only when that fails does a plain run tell an older bwrap from no sandbox at all.
 */
function runProbe(bwrap: string): Promise<SandboxAvailability> {
  const head = ['--unshare-all', '--die-with-parent', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc'];
  const sized = [...head, '--size', '1048576', '--tmpfs', '/tmp', '--', 'true'];
  const plain = [...head, '--', 'true'];
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
  return new Promise((resolve) => {
    execFile(bwrap, sized, { timeout: 10_000, env }, (sizeError) => {
      if (!sizeError) return resolve({ available: true, bwrap, tmpfsSize: true });
      execFile(bwrap, plain, { timeout: 10_000, env }, (error, _stdout, stderr) => {
        if (!error) return resolve({ available: true, bwrap, tmpfsSize: false });
        const said = String(stderr).trim().split('\n')[0] || error.message;
        resolve({
          available: false,
          reason: `${bwrap} cannot create a sandbox here (${said}); user namespaces may be disabled (kernel.unprivileged_userns_clone, or an AppArmor rule for bwrap)`,
        });
      });
    });
  });
}

function isExecutable(file: string): boolean {
  try {
    // Most PATH folders lack it: asked without an exception (issue 22).
    if (!statSync(file, { throwIfNoEntry: false })?.isFile()) return false;
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(name: string, path: string): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}
