/**
 * Where extensions are looked for. Skills and commands share one project walk: the git root
 * first, then each directory down to the workspace, so a folder nearer the workspace is later
 * and wins (reference 9.4: later sources overwrite earlier ones).
 */
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { findGitRoot } from '../tools/builtin/walker.js';

export interface ExtensionPlaces {
  /** Crystal Home (`~/.crystal` or `CRYSTAL_HOME`). */
  readonly home: string;
  readonly workspace: string;
  /** The user's home folder for the Claude, agents and OpenCode folders; defaults to `os.homedir()`. */
  readonly userHome?: string | undefined;
}

/** The project directories from the git root (or the workspace when there is none) down to the workspace. */
export function projectDirs(workspace: string): string[] {
  const start = resolve(workspace);
  const top = findGitRoot(start) ?? start;
  const dirs: string[] = [];
  for (let dir = start; ; dir = dirname(dir)) {
    dirs.unshift(dir);
    if (dir === top || dirname(dir) === dir) break;
  }
  return dirs;
}

export function userHomeOf(places: ExtensionPlaces): string {
  return places.userHome ?? homedir();
}

/** Skill roots in the reference's order (9.4): global, then the project walk. */
export function skillSearchRoots(places: ExtensionPlaces): string[] {
  const user = userHomeOf(places);
  const roots = [
    join(user, '.claude', 'skills'),
    join(user, '.agents', 'skills'),
    join(user, '.config', 'opencode', 'skill'),
    join(user, '.config', 'opencode', 'skills'),
    join(user, '.opencode', 'skill'),
    join(user, '.opencode', 'skills'),
    join(places.home, 'skill'),
    join(places.home, 'skills'),
  ];
  for (const dir of projectDirs(places.workspace)) {
    roots.push(
      join(dir, '.claude', 'skills'),
      join(dir, '.agents', 'skills'),
      join(dir, '.opencode', 'skill'),
      join(dir, '.opencode', 'skills'),
      join(dir, '.crystal', 'skill'),
      join(dir, '.crystal', 'skills'),
    );
  }
  return dedupe(roots);
}

/** Command folders, lowest precedence first: Claude's user folder, Home, then per project directory `.claude` then `.crystal`. */
export function commandSearchRoots(places: ExtensionPlaces): string[] {
  const roots = [join(userHomeOf(places), '.claude', 'commands'), join(places.home, 'commands')];
  for (const dir of projectDirs(places.workspace))
    roots.push(join(dir, '.claude', 'commands'), join(dir, '.crystal', 'commands'));
  return dedupe(roots);
}

function dedupe(paths: readonly string[]): string[] {
  const seen = new Set<string>();
  return paths.filter((path) => {
    const key = resolve(path);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
