// The system packages the tests drive for real (SETUP-5). `npm test` checks them first and
// stops with one line naming what to install, instead of dozens of failures later. Run by
// itself (`node scripts/prerequisites.mjs`) it prints that line, or nothing, and exits 1 or 0.
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Each: the command looked up on PATH (any one of them), and the Debian package that provides it. */
export const PREREQUISITES = [
  { commands: ['chromium'], apt: 'chromium', why: 'the Web surface tests (playwright-core)' },
  { commands: ['Xvfb'], apt: 'xvfb', why: 'clipboard image tests under a real X server' },
  { commands: ['xclip'], apt: 'xclip', why: 'clipboard image tests' },
  { commands: ['rg'], apt: 'ripgrep', why: 'grep and glob' },
  { commands: ['bwrap'], apt: 'bubblewrap', why: 'the OS sandbox' },
  { commands: ['socat'], apt: 'socat', why: 'the sandbox network proxy' },
  { commands: ['openssl'], apt: 'openssl', why: 'the certificate tests (a private CA made at test time)' },
];

/** The one command that installs every prerequisite on Debian or Ubuntu (the README shows it). */
export const INSTALL_ALL = `sudo apt-get install -y ${[...PREREQUISITES.map((p) => p.apt), 'build-essential', 'python3'].join(' ')}`;

function onPath(command, path) {
  for (const dir of (path ?? '').split(delimiter)) {
    if (dir === '') continue;
    try {
      accessSync(join(dir, command), constants.X_OK);
      return true;
    } catch {
      // not in this folder
    }
  }
  return false;
}

/**
 * The Debian packages missing on this machine for `env.PATH`. node-pty (the terminal tests)
 * counts as missing when its native module does not load and no C++ toolchain is there to
 * build it.
 */
export function missingPrerequisites(env = process.env, root = new URL('..', import.meta.url).pathname) {
  const missing = [];
  for (const p of PREREQUISITES) {
    if (!p.commands.some((c) => onPath(c, env.PATH))) missing.push({ apt: p.apt, command: p.commands[0] });
  }
  const pty = spawnSync(process.execPath, ['-e', "require('node-pty')"], { cwd: root, env, stdio: 'ignore' });
  if (pty.status !== 0) {
    const toolchain = ['g++', 'make', 'python3'].filter((c) => !onPath(c, env.PATH));
    missing.push({
      apt: toolchain.length > 0 ? 'build-essential python3' : '',
      command: 'node-pty',
      fix: toolchain.length > 0 ? undefined : 'npm rebuild node-pty',
    });
  }
  return missing;
}

/** One line for the operator, or undefined when nothing is missing. */
export function prerequisiteLine(missing) {
  if (missing.length === 0) return undefined;
  const names = missing.map((m) => (m.command === 'node-pty' ? 'node-pty native module' : `${m.apt} (${m.command})`));
  const apt = missing.map((m) => m.apt).filter(Boolean);
  const fixes = [apt.length > 0 ? `sudo apt-get install -y ${apt.join(' ')}` : '', ...missing.map((m) => m.fix ?? '')].filter(
    Boolean,
  );
  return `npm test needs system packages that are missing: ${names.join(', ')}. Install with: ${fixes.join(' && ')}`;
}

if (process.argv[1] && new URL(import.meta.url).pathname === process.argv[1]) {
  const line = prerequisiteLine(missingPrerequisites());
  if (line) {
    console.error(line);
    process.exit(1);
  }
}
