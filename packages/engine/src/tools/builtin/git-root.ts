/** The git root above a directory (a `.git` entry), read before the engine loads (trust, issue 22). */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

export function findGitRoot(dir: string): string | undefined {
  let current = dir;
  for (;;) {
    if (existsSync(join(current, '.git'))) return current;
    const parent = dirname(current);
    if (parent === current) return undefined;
    current = parent;
  }
}
