/**
 * The same `SandboxPolicy` for macOS: a Seatbelt profile (SBPL) for `sandbox-exec -p` (SBX-1).
 * Seatbelt decides per operation, the last matching rule winning, on the real paths (links
 * resolved: `/tmp` is `/private/tmp`, `$TMPDIR` under `/private/var/folders`), so every path is
 * written resolved. The rules, in order:
 * - deny by default; processes may fork, exec and signal their own sandbox;
 * - read everything, then deny reading the hidden paths (credentials, Crystal's Home);
 * - write only the writable folders, temp and the terminal devices, then deny writing the
 *   read-only paths inside them (`.git/hooks`, `.git/config`, `.crystal`) and the hidden ones;
 * - a read-only or hidden path, and every folder above it up to its writable folder, cannot be
 *   renamed or removed (`file-write-unlink`): `mv .git x && mkdir -p .git/hooks` would otherwise
 *   replace a protected folder with a writable one;
 * - network: all of it when the policy allows it; else only the filtering proxy on
 *   `localhost:<port>` (no bridge is needed: there is no network namespace to cross), or none.
 *
 * Unlike the Linux sandbox, temp is the host's (Seatbelt has no private mounts): it is writable,
 * not private. This file only generates text; the tests check its rules on Linux, and no test here
 * runs `sandbox-exec` (that needs a Mac).
 */
import { existsSync, realpathSync } from 'node:fs';
import { dirname, resolve, sep } from 'node:path';
import type { SandboxPolicy } from './policy.js';

export interface SeatbeltOptions {
  /** Temp folders the command may write (`/tmp`, `$TMPDIR`): shared with the host on macOS. */
  readonly temps: readonly string[];
  /** With `network: false`, the TCP port on 127.0.0.1 where the filtering proxy listens. */
  readonly proxyPort?: number;
}

/** An SBPL string literal. */
export function sbplString(text: string): string {
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

export function seatbeltProfile(policy: SandboxPolicy, options: SeatbeltOptions): string {
  const writable = unique(policy.writable.map(real));
  const temps = unique(options.temps.map(real));
  const hidden = unique(policy.hidden.flatMap((path) => [resolve(path), real(path)]));
  const readOnly = unique((policy.readOnly ?? []).map(real)).filter((path) => writable.some((dir) => within(path, dir)));
  const lines = [
    '(version 1)',
    '(deny default)',
    '; Processes: fork and exec, signal and inspect only inside this sandbox.',
    '(allow process-fork)',
    '(allow process-exec)',
    '(allow signal (target same-sandbox))',
    '(allow process-info* (target same-sandbox))',
    '(allow sysctl-read)',
    '(allow mach-lookup)',
    '(allow ipc-posix-shm)',
    '(allow ipc-posix-sem)',
    '(allow user-preference-read)',
    '(allow pseudo-tty)',
    '(allow file-ioctl (literal "/dev/tty") (regex #"^/dev/ttys[0-9]+$"))',
    '; Reads: everything but the hidden paths.',
    '(allow file-read*)',
  ];
  if (hidden.length > 0) lines.push(`(deny file-read* ${filters(hidden)})`);
  lines.push(
    '; Writes: the writable folders, temp and the terminal devices only.',
    `(allow file-write* ${filters([...writable, ...temps])} (literal "/dev/null") (literal "/dev/tty") (regex #"^/dev/ttys[0-9]+$") (literal "/dev/stdout") (literal "/dev/stderr"))`,
  );
  const fixed = [...readOnly, ...hidden];
  if (fixed.length > 0) lines.push(`(deny file-write* ${filters(fixed)})`);
  const anchored = unique(fixed.flatMap((path) => ancestorsWithin(path, [...writable, ...temps])));
  if (anchored.length > 0) {
    lines.push(
      '; Protected paths and the folders above them cannot be moved away and replaced.',
      `(deny file-write-unlink ${anchored.map((path) => `(literal ${sbplString(path)})`).join(' ')})`,
    );
  }
  if (policy.network) {
    lines.push('; Network: on.', '(allow network*)', '(allow system-socket)');
  } else if (options.proxyPort !== undefined) {
    lines.push(
      '; Network: only the filtering proxy (HTTP_PROXY / HTTPS_PROXY point there).',
      `(allow network-outbound (remote ip ${sbplString(`localhost:${options.proxyPort}`)}))`,
    );
  } else {
    lines.push('; Network: off (nothing allows network*, also not 127.0.0.1).');
  }
  return `${lines.join('\n')}\n`;
}

export interface SeatbeltCommand {
  readonly file: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
}

/** `sandbox-exec -p <profile> -- argv`, with the proxy variables when the network goes through the proxy. */
export function wrapSeatbelt(
  request: { readonly argv: readonly [string, ...string[]]; readonly env: NodeJS.ProcessEnv; readonly policy: SandboxPolicy },
  options: SeatbeltOptions & { readonly sandboxExec: string },
): SeatbeltCommand {
  const profile = seatbeltProfile(request.policy, options);
  const env: NodeJS.ProcessEnv = { ...request.env };
  if (!request.policy.network && options.proxyPort !== undefined) {
    const url = `http://127.0.0.1:${options.proxyPort}`;
    Object.assign(env, { HTTP_PROXY: url, HTTPS_PROXY: url, http_proxy: url, https_proxy: url });
    for (const name of ['NO_PROXY', 'no_proxy', 'ALL_PROXY', 'all_proxy']) delete env[name];
  }
  return { file: options.sandboxExec, args: ['-p', profile, '--', ...request.argv], env };
}

function filters(paths: readonly string[]): string {
  return paths.map((path) => `(subpath ${sbplString(path)})`).join(' ');
}

/** The path and each folder above it up to the innermost writable root holding it (the root itself excluded). */
function ancestorsWithin(path: string, roots: readonly string[]): string[] {
  const root = roots.filter((dir) => within(path, dir)).sort((a, b) => b.length - a.length)[0];
  if (root === undefined) return [];
  const out: string[] = [];
  for (let at = path; at !== root && within(at, root); at = dirname(at)) out.push(at);
  return out;
}

function unique(paths: readonly string[]): string[] {
  return [...new Set(paths)];
}

function real(path: string): string {
  try {
    return existsSync(path) ? realpathSync(path) : resolve(path);
  } catch {
    return resolve(path);
  }
}

function within(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith(sep) ? dir : `${dir}${sep}`);
}
