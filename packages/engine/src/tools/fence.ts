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
  /** Whether the final target is the workspace or inside it. */
  readonly inside: boolean;
  /** A credentials file, private key, `.env` file, or a path through `.ssh` / `.gnupg`. */
  readonly credential: boolean;
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

export function resolvePath(workspace: string, path: string): PathVerdict {
  const root = realPath(resolve(workspace));
  const expanded = expandHome(path.trim() === '' ? '.' : path);
  const absolute = isAbsolute(expanded) ? resolve(expanded) : resolve(workspace, expanded);
  const real = realPath(absolute);
  const inside = real === root || real.startsWith(root.endsWith(sep) ? root : root + sep);
  const credential = isCredentialPath(absolute) || isCredentialPath(real);
  return { input: path, absolute, real, inside, credential, display: inside ? relative(root, real) || '.' : real };
}
