/**
 * The validated-configuration memo in Home (`cache/validated-config.json`; load.ts,
 * `ValidatedConfigMemo`; issue 22): the last `config.json` a build validated, with what validating
 * it gave. A start of the same build with the same text of the same file uses that result and
 * does not build or run the zod schema (~3 ms of every start).
 *
 * It holds what `config.json` holds (keys included), so it lives in Home, is written 0600 in a
 * 0700 folder, is hidden from sandboxed commands like `config.json` (containment.ts), and is read
 * only when this user owns it and no one else can write it or its folder. Only successful
 * validations are kept, and the build (the surface's content hash) names the file: another build
 * validates again. Any failure to read or write it is a miss, never an error.
 */
import {
  closeSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  type Stats,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { uniqueHex } from '@crystal/core';
import { homePaths } from '../home.js';
import type { ValidatedConfigMemo } from './load.js';

const PREFIX = 'validated-config-';

interface Entry {
  readonly file: string;
  readonly text: string;
  readonly config: unknown;
  readonly warnings: readonly string[];
}

/** The memo of one build in one Home. */
export interface HomeConfigMemo extends ValidatedConfigMemo {
  /**
   * Whether the last `recall` found an entry of this build, for this text or another: false
   * before this build first validated in this Home (a new install or upgrade), true after a
   * `config.json` edit.
   */
  readonly found: boolean;
}

/** The memo of `build` in `home`, or undefined when no build is known (nothing is kept then). */
export function homeConfigMemo(home: string, build: string | undefined): HomeConfigMemo | undefined {
  if (build === undefined || !/^[0-9A-Za-z_-]{1,64}$/.test(build)) return undefined;
  const dir = homePaths(home).cache;
  const path = join(dir, `${PREFIX}${build}.json`);
  let found = false;
  return {
    get found() {
      return found;
    },
    recall(file, text) {
      const entry = read(dir, path);
      found = entry !== undefined;
      if (entry === undefined || entry.file !== file || entry.text !== text) return undefined;
      return { config: entry.config, warnings: entry.warnings };
    },
    remember(file, text, config, warnings) {
      return write(dir, path, JSON.stringify({ file, text, config, warnings } satisfies Entry));
    },
  };
}

/** Owned by this user and writable by no one else. */
function ours(stat: Stats): boolean {
  if (process.platform === 'win32' || typeof process.getuid !== 'function') return true;
  return stat.uid === process.getuid() && (stat.mode & 0o022) === 0;
}

function read(dir: string, path: string): Entry | undefined {
  let fd: number | undefined;
  try {
    const folder = lstatSync(dir, { throwIfNoEntry: false });
    if (!folder?.isDirectory() || !ours(folder)) return undefined;
    fd = openSync(path, 'r');
    const stat = fstatSync(fd);
    if (!stat.isFile() || !ours(stat)) return undefined;
    const entry = JSON.parse(readFileSync(fd, 'utf8')) as Partial<Entry> | null;
    if (entry === null || typeof entry !== 'object') return undefined;
    const { file, text, config, warnings } = entry;
    if (typeof file !== 'string' || typeof text !== 'string') return undefined;
    if (config === null || typeof config !== 'object' || Array.isArray(config)) return undefined;
    if (!Array.isArray(warnings) || !warnings.every((w) => typeof w === 'string')) return undefined;
    return { file, text, config, warnings };
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Replaces the file atomically (a reader sees the old entry or the new one); other builds' entries
 * go. Whether the entry was kept (the next start will read it).
 */
function write(dir: string, path: string, text: string): boolean {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const folder = lstatSync(dir);
    if (!folder.isDirectory() || !ours(folder)) return false;
    const temp = `${path}.${process.pid}.${uniqueHex(4)}.tmp`;
    writeFileSync(temp, text, { mode: 0o600, flag: 'wx' });
    try {
      renameSync(temp, path);
    } catch {
      rmSync(temp, { force: true });
      return false;
    }
    const name = path.slice(dir.length + 1);
    try {
      for (const other of readdirSync(dir)) {
        if (other.startsWith(PREFIX) && other !== name) rmSync(join(dir, other), { force: true });
      }
    } catch {
      // Another build's entry left behind is never read; this one is kept either way.
    }
    return true;
  } catch {
    // A full disk, a read-only Home: the next start validates again.
    return false;
  }
}
