/**
 * The workspace fence (TOOLS-3): a path is resolved against the workspace, `~` expanded, and
 * every symlink followed to its final target before the inside/outside decision, so `..` and a
 * link out of the workspace are both outside paths. Credential files are recognised here once,
 * for the tools (which refuse them) and the approval classifier (which calls them Forbidden).
 */
import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

export interface PathVerdict {
  /** The path as given. */
  readonly input: string;
  /** Absolute, before following links. */
  readonly absolute: string;
  /** Absolute, every existing link followed (the final target). */
  readonly real: string;
  /** Whether the final target is the workspace or inside it (never when it is in Home, SEC-3). */
  readonly inside: boolean;
  /**
   * A credentials file, private key, `.env` file, a path through `.ssh` / `.gnupg`, or a Home
   * file that holds a secret (`config.json`, `credentials.json`): refused by every tool.
   */
  readonly credential: boolean;
  /** In Crystal Home (when the caller named it), also when the workspace contains Home (SEC-3). */
  readonly home: boolean;
  /** Relative to the workspace when inside (`.` for the root), else the real absolute path. */
  readonly display: string;
}

const ENV_TEMPLATES = new Set(['.env.example', '.env.sample', '.env.template', '.env.dist']);
const KEY_NAMES = /^(id_(rsa|dsa|ecdsa|ed25519)(_sk)?|.*\.(pem|key|p12|pfx|keystore|jks))$/i;

export function expandHome(path: string): string {
  if (path === '~') return homedir();
  if (path.startsWith('~/')) return join(homedir(), path.slice(2));
  return path;
}

/** Follows links of the longest existing prefix; the rest (not created yet) is appended. */
export function realPath(absolute: string): string {
  let head = absolute;
  const rest: string[] = [];
  for (;;) {
    try {
      const real = realpathSync(head);
      return rest.length === 0 ? real : join(real, ...rest.reverse());
    } catch {
      const parent = dirname(head);
      if (parent === head) return absolute;
      rest.push(basename(head));
      head = parent;
    }
  }
}

/** A credential file by its name alone (the directory part is checked where directories are walked). */
export function isCredentialName(name: string): boolean {
  if (name === 'credentials.json') return true;
  if ((name === '.env' || name.startsWith('.env.')) && !ENV_TEMPLATES.has(name)) return true;
  return KEY_NAMES.test(name);
}

export function isCredentialPath(path: string): boolean {
  const segments = path.split(/[\\/]+/);
  if (segments.some((s) => s === '.ssh' || s === '.gnupg')) return true;
  const name = segments.at(-1) ?? '';
  if (name === 'credentials.json') return true;
  if ((name === '.env' || name.startsWith('.env.')) && !ENV_TEMPLATES.has(name)) return true;
  return KEY_NAMES.test(name);
}

export function isWithin(root: string, path: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

/**
 * Home files that hold secrets (SEC-3): `config.json` may carry a literal `apiKey`,
 * `credentials.json` carries keys, and session files and logs keep whatever was pasted or
 * printed (a key among it), and `cache` keeps a validated copy of `config.json` (config/memo.ts).
 * No tool reads or writes them, asked or not: a model never needs a key, and an approval card is
 * too easy to click through for one.
 */
export const HOME_SECRET_FILES: readonly string[] = ['config.json', 'credentials.json'];
export const HOME_SECRET_DIRS: readonly string[] = ['sessions', 'logs', 'cache'];

/**
 * Whether `real` (links followed) is Crystal Home's for the fence (SEC-3): inside Home and not
 * inside a workspace that itself lies in Home (`<home>/space`).
 */
export function inHome(homeReal: string, workspaceReal: string, real: string): boolean {
  if (!isWithin(homeReal, real)) return false;
  return !(isWithin(homeReal, workspaceReal) && workspaceReal !== homeReal && isWithin(workspaceReal, real));
}

export function isHomeSecret(homeReal: string, real: string): boolean {
  if (!isWithin(homeReal, real)) return false;
  const rel = relative(homeReal, real);
  const top = rel.split(sep)[0] ?? '';
  return HOME_SECRET_FILES.includes(rel) || HOME_SECRET_DIRS.includes(top) || isCredentialName(basename(real));
}

/** `home`: Crystal Home; its contents count as outside the workspace and its secrets as credentials. */
export function resolvePath(workspace: string, path: string, home?: string): PathVerdict {
  const root = realPath(resolve(workspace));
  const expanded = expandHome(path.trim() === '' ? '.' : path);
  const absolute = isAbsolute(expanded) ? resolve(expanded) : resolve(workspace, expanded);
  const real = realPath(absolute);
  const homeReal = home === undefined ? undefined : realPath(resolve(home));
  const isHome = homeReal !== undefined && inHome(homeReal, root, real);
  const inside = !isHome && isWithin(root, real);
  const secret = homeReal !== undefined && isHome && isHomeSecret(homeReal, real);
  const credential = secret || isCredentialPath(absolute) || isCredentialPath(real);
  return {
    input: path,
    absolute,
    real,
    inside,
    credential,
    home: isHome,
    display: inside ? relative(root, real) || '.' : real,
  };
}
