/**
 * A conservative reading of a shell command for the classifier (SEC-10, APPR-1): commands that
 * write or delete outside the workspace ask in every mode, however they are spelled. The command
 * is split the way a POSIX shell would (quotes removed, so `r""m` is `rm`; `$(…)` and backticks
 * kept aside and read as commands of their own), and then:
 *   - a program name that is not a literal (`$CMD`, `$(…)`, `$'…'`) cannot be known: it asks;
 *   - privileged programs (`su`, `halt`, `pkill`, `killall`, …) are Privileged;
 *   - a force push in any spelling (`-f`, `--force*`, `--mirror`, a `+refspec`, a `:delete`) is Forbidden;
 *   - for programs that write or delete (`rm`, `mv`, `cp`, `tee`, `sed -i`, `find -delete`, …)
 *     and for every output redirection, each target is resolved against the workspace (a
 *     literal `cd` is followed); a target outside, the workspace root itself for a recursive
 *     delete, or one that cannot be known (expansions, substitutions, globs that climb out,
 *     after a `cd` to an unknown place) asks;
 *   - a glob that could match a credential folder or key (`~/.s?h/id_rsa`) is Forbidden;
 *   - `sh -c STRING`, `eval STRING` and substitutions are read recursively.
 * What this cannot see (a script, an interpreter one-liner) is for the OS sandbox to contain.
 */
import { homedir } from 'node:os';
import { isAbsolute, resolve } from 'node:path';
import { isCredentialPath, isWithin, realPath } from '../tools/fence.js';

export interface ShellWord {
  /** The word with quotes removed (expansions left as written). */
  readonly text: string;
  /** Holds an expansion or substitution whose value is unknown here. */
  readonly dynamic: boolean;
  /** Holds an unquoted glob character (`*`, `?`, `[`). */
  readonly glob: boolean;
  /** Starts with an unquoted `~`. */
  readonly tilde: boolean;
}

export interface SimpleCommand {
  readonly words: readonly ShellWord[];
  /** Output redirection targets (`>`, `>>`, `>|`, `&>`, `<>`, `N>`); fd duplications are left out. */
  readonly outputs: readonly ShellWord[];
}

export interface ParsedShell {
  readonly commands: readonly SimpleCommand[];
  /** The text inside `$(…)`, backticks and `<(…)`/`>(…)`: commands of their own. */
  readonly substitutions: readonly string[];
}

/** Splits a command line into simple commands; never throws (an unclosed quote ends the word). */
export function parseShell(input: string): ParsedShell {
  const commands: SimpleCommand[] = [];
  const substitutions: string[] = [];
  let words: ShellWord[] = [];
  let outputs: ShellWord[] = [];
  let text = '';
  let started = false;
  let dynamic = false;
  let glob = false;
  let tilde = false;
  let redirect: 'out' | 'in' | undefined;
  let i = 0;
  const n = input.length;

  const endWord = (): void => {
    if (!started) return;
    const word: ShellWord = { text, dynamic, glob, tilde };
    if (redirect === 'out') outputs.push(word);
    else if (redirect === undefined) words.push(word);
    redirect = undefined;
    text = '';
    started = false;
    dynamic = false;
    glob = false;
    tilde = false;
  };
  const endCommand = (): void => {
    endWord();
    if (words.length > 0 || outputs.length > 0) commands.push({ words, outputs });
    words = [];
    outputs = [];
    redirect = undefined;
  };
  /** The index after the `)` closing a `(` at `start` (nesting and quotes respected). */
  const closeParen = (start: number): number => {
    let depth = 0;
    for (let j = start; j < n; j++) {
      const c = input[j];
      if (c === '\\') j++;
      else if (c === "'") {
        const end = input.indexOf("'", j + 1);
        j = end === -1 ? n : end;
      } else if (c === '(') depth++;
      else if (c === ')') {
        depth--;
        if (depth === 0) return j + 1;
      }
    }
    return n;
  };
  const dollar = (): void => {
    // At `$`: a substitution, an arithmetic expansion, a parameter or ANSI-C quoting.
    const next = input[i + 1];
    started = true;
    dynamic = true;
    if (next === '(') {
      const end = closeParen(i + 1);
      const inner = input.slice(i + 2, end - 1);
      if (!inner.startsWith('(')) substitutions.push(inner);
      text += input.slice(i, end);
      i = end;
    } else if (next === '{') {
      const end = input.indexOf('}', i);
      const stop = end === -1 ? n : end + 1;
      text += input.slice(i, stop);
      i = stop;
    } else if (next === "'") {
      const end = input.indexOf("'", i + 2);
      const stop = end === -1 ? n : end + 1;
      text += input.slice(i, stop);
      i = stop;
    } else {
      let j = i + 1;
      if (j < n && /[@*#?$!0-9-]/.test(input[j] as string)) j++;
      else while (j < n && /[A-Za-z0-9_]/.test(input[j] as string)) j++;
      if (j === i + 1) dynamic = false; // A lone `$` is a literal dollar.
      text += input.slice(i, j);
      i = j;
    }
  };
  const backtick = (): void => {
    let j = i + 1;
    let inner = '';
    while (j < n && input[j] !== '`') {
      if (input[j] === '\\' && j + 1 < n) {
        inner += input[j + 1];
        j += 2;
      } else inner += input[j++];
    }
    substitutions.push(inner);
    started = true;
    dynamic = true;
    text += input.slice(i, j + 1);
    i = j + 1;
  };

  while (i < n) {
    const c = input[i] as string;
    if (c === '\\') {
      if (input[i + 1] === '\n') i += 2;
      else {
        started = true;
        text += input[i + 1] ?? '';
        i += 2;
      }
    } else if (c === "'") {
      const end = input.indexOf("'", i + 1);
      const stop = end === -1 ? n : end;
      started = true;
      text += input.slice(i + 1, stop);
      i = stop + 1;
    } else if (c === '"') {
      started = true;
      i++;
      while (i < n && input[i] !== '"') {
        const d = input[i] as string;
        if (d === '\\' && i + 1 < n && /[$`"\\\n]/.test(input[i + 1] as string)) {
          text += input[i + 1];
          i += 2;
        } else if (d === '$') dollar();
        else if (d === '`') backtick();
        else {
          text += d;
          i++;
        }
      }
      i++;
    } else if (c === '$') dollar();
    else if (c === '`') backtick();
    else if (c === ' ' || c === '\t') {
      endWord();
      i++;
    } else if (c === '#' && !started) {
      const end = input.indexOf('\n', i);
      i = end === -1 ? n : end;
    } else if (c === '\n' || c === ';' || c === '|' || c === '&' || c === '(' || c === ')') {
      // `&>` and `&>>` redirect; `(`/`)` group; the rest separate commands.
      if (c === '&' && input[i + 1] === '>') {
        endWord();
        redirect = 'out';
        i += input[i + 2] === '>' ? 3 : 2;
        continue;
      }
      if (c === '(' && started) {
        // `<(…)` / `>(…)` were handled at the redirection; a `(` inside a word is literal.
        text += c;
        i++;
        continue;
      }
      endCommand();
      i++;
    } else if (c === '>' || c === '<') {
      // `N>` with N a lone digit word redirects that descriptor.
      if (started && /^\d$/.test(text) && !dynamic) {
        text = '';
        started = false;
      } else endWord();
      if (input[i + 1] === '(') {
        // Process substitution: a command of its own.
        const end = closeParen(i + 1);
        substitutions.push(input.slice(i + 2, end - 1));
        i = end;
        continue;
      }
      if (c === '<' && input[i + 1] === '<') {
        // Here-document or here-string: the body is data; skip the delimiter word.
        i += input[i + 2] === '<' ? 3 : 2;
        redirect = 'in';
        continue;
      }
      let j = i + 1;
      if (c === '<' && input[j] === '>') j++;
      else if (c === '>' && (input[j] === '>' || input[j] === '|')) j++;
      if (input[j] === '&') {
        // `>&2`, `2>&1`, `<&0`: a descriptor, not a file (`>&file` is rare; treated as a descriptor only for digits and `-`).
        let k = j + 1;
        while (k < n && /[0-9-]/.test(input[k] as string)) k++;
        if (k > j + 1) {
          i = k;
          continue;
        }
        j++;
      }
      redirect = c === '>' || input[i + 1] === '>' ? 'out' : 'in';
      i = j;
    } else {
      if (!started && c === '~') tilde = true;
      if (c === '*' || c === '?' || c === '[') glob = true;
      started = true;
      text += c;
      i++;
    }
  }
  endCommand();
  return { commands, substitutions };
}

export type ShellConcern =
  | { readonly kind: 'forbidden'; readonly why: string }
  | { readonly kind: 'privileged'; readonly why: string }
  | { readonly kind: 'outside'; readonly why: string };

const PRIVILEGED_PROGRAMS = new Set([
  'su',
  'doas',
  'pkexec',
  'halt',
  'poweroff',
  'reboot',
  'shutdown',
  'init',
  'telinit',
  'systemctl',
  'service',
  'pkill',
  'killall',
  'fdisk',
  'sfdisk',
  'parted',
  'wipefs',
  'mount',
  'umount',
  'swapoff',
  'swapon',
  'crontab',
  'passwd',
  'chpasswd',
  'useradd',
  'userdel',
  'usermod',
  'iptables',
  'nft',
  'modprobe',
  'insmod',
  'rmmod',
  'sysctl',
  'chroot',
  'launchctl',
  'diskutil',
]);
/** Programs whose every operand may be written, created or deleted. */
const WRITING_PROGRAMS = new Set([
  'rm',
  'rmdir',
  'unlink',
  'shred',
  'touch',
  'mkdir',
  'truncate',
  'chmod',
  'chown',
  'chgrp',
  'ln',
  'cp',
  'mv',
  'install',
  'tee',
  'rsync',
  'dd',
  'split',
  'csplit',
  'mkfifo',
  'mknod',
  'tar',
  'unzip',
  'patch',
]);
/** Programs that write their operands only with an in-place flag. */
const IN_PLACE_PROGRAMS: Readonly<Record<string, RegExp>> = {
  sed: /^(?:-[a-zA-Z]*i|--in-place)/,
  perl: /^-[a-zA-Z]*i/,
  ruby: /^-[a-zA-Z]*i/,
};
/** Wrappers that run the rest of their words as a command, with how many option words they take. */
const WRAPPERS = new Set(['command', 'builtin', 'exec', 'nohup', 'nice', 'time', 'env', 'stdbuf', 'ionice', 'setsid', 'busybox']);
const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'ash', 'fish']);
const HARMLESS_TARGETS = new Set(['/dev/null', '/dev/stdout', '/dev/stderr', '/dev/tty', '/dev/zero']);
/** Names a credential glob may stand for (SEC-10: `~/.s?h/id_rsa`). */
const SENSITIVE_NAMES = [
  '.ssh',
  '.gnupg',
  '.aws',
  '.azure',
  '.kube',
  '.docker',
  '.netrc',
  '.git-credentials',
  '.npmrc',
  '.pypirc',
  'id_rsa',
  'id_dsa',
  'id_ecdsa',
  'id_ed25519',
  'credentials.json',
  '.env',
  '.crystal',
];

export const MAX_SHELL_DEPTH = 4;

/** The most serious concern of a command line, or undefined when it stays in the workspace. */
export function shellConcern(command: string, workspace: string, depth = 0): ShellConcern | undefined {
  if (depth > MAX_SHELL_DEPTH) return { kind: 'outside', why: 'nested too deeply to read' };
  const parsed = parseShell(command);
  const concerns: ShellConcern[] = [];
  const root = realPath(resolve(workspace));
  let cwd: string | undefined = root;
  for (const inner of parsed.substitutions) {
    const concern = shellConcern(inner, workspace, depth + 1);
    if (concern) concerns.push(concern);
  }
  for (const simple of parsed.commands) {
    const result = commandConcern(simple, root, cwd, workspace, depth);
    cwd = result.cwd;
    concerns.push(...result.concerns);
  }
  return worst(concerns);
}

function worst(concerns: readonly ShellConcern[]): ShellConcern | undefined {
  return (
    concerns.find((c) => c.kind === 'forbidden') ??
    concerns.find((c) => c.kind === 'privileged') ??
    concerns.find((c) => c.kind === 'outside')
  );
}

function commandConcern(
  simple: SimpleCommand,
  root: string,
  cwd: string | undefined,
  workspace: string,
  depth: number,
): { concerns: ShellConcern[]; cwd: string | undefined } {
  const concerns: ShellConcern[] = [];
  for (const target of simple.outputs) {
    const where = targetOf(target, root, cwd);
    if (where !== 'inside') concerns.push({ kind: 'outside', why: `writes to ${describe(target, where)}` });
  }
  for (const word of simple.words) {
    const credential = credentialWord(word, root, cwd);
    if (credential) concerns.push({ kind: 'forbidden', why: `names a credential path (${word.text})` });
  }
  const words = [...simple.words];
  // Assignments before the program, then wrappers.
  while (words.length > 0 && !words[0]?.dynamic && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0]?.text ?? '')) words.shift();
  for (;;) {
    const head = words[0];
    if (!head || head.dynamic) break;
    const name = programName(head.text);
    if (name === 'timeout') {
      words.shift();
      while (words[0]?.text.startsWith('-')) words.shift();
      words.shift(); // the duration
      continue;
    }
    if (name === 'xargs') {
      words.shift();
      while (words[0]?.text.startsWith('-')) words.shift();
      const next = words[0];
      if (next && (WRITING_PROGRAMS.has(programName(next.text)) || next.dynamic)) {
        concerns.push({ kind: 'outside', why: `${next.text} gets operands that cannot be known (xargs)` });
      }
      continue;
    }
    if (!WRAPPERS.has(name)) break;
    words.shift();
    while (words[0] && (words[0].text.startsWith('-') || /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0].text))) words.shift();
  }
  const head = words[0];
  if (!head) return { concerns, cwd };
  if (head.dynamic) {
    concerns.push({ kind: 'outside', why: `the program (${head.text}) cannot be known before it runs` });
    return { concerns, cwd };
  }
  const name = programName(head.text);
  const args = words.slice(1);
  if (name === 'cd' || name === 'pushd') {
    const to = args.find((w) => !w.text.startsWith('-'));
    if (!to) return { concerns, cwd: undefined };
    const where = literalPath(to, cwd);
    return { concerns, cwd: where === undefined ? undefined : realPath(where) };
  }
  if (PRIVILEGED_PROGRAMS.has(name) || /^mkfs(\.|$)/.test(name)) {
    concerns.push({ kind: 'privileged', why: `${name} is a privileged program` });
  }
  if (name === 'kill' && args.some((w) => /^-(?:9|KILL|SIGKILL)$/i.test(w.text) || w.text === '-1')) {
    concerns.push({ kind: 'privileged', why: 'kill -9' });
  }
  if (name === 'git') concerns.push(...gitConcerns(args, root, cwd));
  if ((SHELLS.has(name) || name === 'eval') && args.length > 0) {
    const script = name === 'eval' ? args : args.slice(args.findIndex((w) => /^-[a-z]*c/.test(w.text)) + 1, undefined);
    const hasC = name === 'eval' || args.some((w) => /^-[a-z]*c/.test(w.text));
    if (hasC) {
      const first = script[0];
      if (!first || script.some((w) => w.dynamic))
        concerns.push({ kind: 'outside', why: `${name} runs a script that cannot be known` });
      else {
        const inner = shellConcern(name === 'eval' ? script.map((w) => w.text).join(' ') : first.text, workspace, depth + 1);
        if (inner) concerns.push(inner);
      }
    }
  }
  const inPlace = IN_PLACE_PROGRAMS[name];
  const writes =
    WRITING_PROGRAMS.has(name) ||
    (inPlace !== undefined && args.some((w) => inPlace.test(w.text))) ||
    (name === 'find' && args.some((w) => /^-(?:delete|exec|execdir|ok|okdir|fprint\w*|fls)$/.test(w.text)));
  if (writes) {
    const recursive = name === 'rm' || name === 'rmdir';
    for (const word of operands(name, args)) {
      const where = targetOf(word, root, cwd);
      if (where !== 'inside') concerns.push({ kind: 'outside', why: `${name} ${describe(word, where)}` });
      else if (recursive && !word.glob && literalPath(word, cwd) !== undefined) {
        const path = realPath(literalPath(word, cwd) as string);
        if (path === root) concerns.push({ kind: 'outside', why: `${name} on the workspace itself` });
      }
    }
  }
  return { concerns, cwd };
}

/** The words of a writing program that name files: `of=` for dd, `--opt=VALUE` values, operands. */
function operands(name: string, args: readonly ShellWord[]): ShellWord[] {
  const out: ShellWord[] = [];
  for (const word of args) {
    const text = word.text;
    if (name === 'dd') {
      if (/^(?:of|if)=/.test(text)) out.push({ ...word, text: text.slice(3), tilde: text.startsWith('~', 3) });
      continue;
    }
    if (text.startsWith('--') && text.includes('=')) {
      const value = text.slice(text.indexOf('=') + 1);
      out.push({ ...word, text: value, tilde: value.startsWith('~') });
      continue;
    }
    if (text.startsWith('-') && text !== '-' && !word.dynamic) continue;
    out.push(word);
  }
  return out;
}

function gitConcerns(args: readonly ShellWord[], root: string, cwd: string | undefined): ShellConcern[] {
  const concerns: ShellConcern[] = [];
  let i = 0;
  let where = cwd;
  while (i < args.length && args[i]?.text.startsWith('-')) {
    const flag = args[i]?.text;
    if ((flag === '-C' || flag === '--git-dir' || flag === '--work-tree') && args[i + 1]) {
      const target = args[i + 1] as ShellWord;
      const place = targetOf(target, root, cwd);
      if (place !== 'inside') concerns.push({ kind: 'outside', why: `git works in ${describe(target, place)}` });
      else where = literalPath(target, cwd);
      i += 2;
    } else if (flag === '-c') i += 2;
    else i++;
  }
  void where;
  const sub = args[i]?.text;
  if (sub === 'push') {
    const rest = args.slice(i + 1);
    const force = rest.some(
      (w) =>
        /^(?:-[a-zA-Z]*f[a-zA-Z]*|--force(?:-with-lease|-if-includes)?(?:=.*)?|--mirror|--delete|-d|--prune)$/.test(w.text) ||
        (/^[+:]/.test(w.text) && w.text.length > 1) ||
        w.dynamic,
    );
    if (force) concerns.push({ kind: 'forbidden', why: 'a force push, a mirror or a branch deletion' });
  }
  return concerns;
}

function programName(text: string): string {
  return text.slice(text.lastIndexOf('/') + 1);
}

/** The absolute path a literal word names, or undefined when it cannot be known here. */
function literalPath(word: ShellWord, cwd: string | undefined): string | undefined {
  if (word.dynamic) return undefined;
  let text = word.text;
  if (word.tilde) {
    if (text === '~' || text.startsWith('~/')) text = homedir() + text.slice(1);
    else return undefined; // `~user`
  }
  if (isAbsolute(text)) return resolve(text);
  if (cwd === undefined) return undefined;
  return resolve(cwd, text);
}

type Place = 'inside' | 'outside' | 'unknown';

function targetOf(word: ShellWord, root: string, cwd: string | undefined): Place {
  if (word.dynamic) return 'unknown';
  // `/dev/tcp/…` and `/dev/udp/…` are bash's sockets, not files: the network rule judges them.
  if (HARMLESS_TARGETS.has(word.text) || /^\/dev\/(?:fd\/\d+$|tcp\/|udp\/)/.test(word.text)) return 'inside';
  const path = literalPath(word, cwd);
  if (path === undefined) return 'unknown';
  if (word.glob) {
    // A glob stays where its literal part is, unless a `..` or an absolute start takes it out.
    const literal = path.slice(0, path.search(/[*?[]/));
    const base = literal.slice(0, literal.lastIndexOf('/') + 1) || '/';
    return isWithin(root, realPath(resolve(base))) && !/(^|\/)\.\.(\/|$)/.test(path) ? 'inside' : 'outside';
  }
  return isWithin(root, realPath(path)) ? 'inside' : 'outside';
}

function describe(word: ShellWord, place: Place): string {
  return place === 'unknown'
    ? `a target that cannot be known before it runs (${word.text})`
    : `outside the workspace (${word.text})`;
}

/** A word that names, or as a glob could match, a credential path outside the workspace. */
function credentialWord(word: ShellWord, root: string, cwd: string | undefined): boolean {
  if (word.dynamic) return false;
  const path = literalPath(word, cwd);
  const outside = word.tilde || isAbsolute(word.text) || /(^|\/)\.\.(\/|$)/.test(word.text);
  if (!outside || path === undefined || isWithin(root, path)) return false;
  if (!word.glob) return isCredentialPath(path);
  const parts = word.text.split('/');
  return parts.some((part) => {
    if (!/[*?[]/.test(part)) return isCredentialPath(part);
    // A shell glob matches a leading dot only when the pattern starts with one.
    const names = part.startsWith('.') ? SENSITIVE_NAMES : SENSITIVE_NAMES.filter((name) => !name.startsWith('.'));
    const pattern = globRegExp(part);
    return names.some((name) => pattern.test(name));
  });
}

/** One path segment of a shell glob (`*`, `?`, `[…]`, `[!…]`) as an anchored regular expression. */
export function globRegExp(segment: string): RegExp {
  const body = segment
    .replace(/[.+^${}()|\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.')
    .replace(/\[!/g, '[^');
  try {
    return new RegExp(`^${body}$`);
  } catch {
    return /^.*$/; // An unclosed bracket: assume it could match anything.
  }
}
