/**
 * SBX-1 on macOS: the Seatbelt profile `sandbox-exec` would enforce, checked rule by rule on
 * Linux. The profile is parsed as S-expressions (so it must be well formed) and the rules are
 * looked up in order, since Seatbelt lets the last matching rule win. No test here runs
 * `sandbox-exec`: that needs a Mac.
 */
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { credentialPaths, protectedWorkspacePaths, type SandboxPolicy, seatbeltProfile, wrapSeatbelt } from '../src/index.js';

type Sexp = string | Sexp[];

/** A small SBPL reader: lists, strings ("..." with \\ escapes), #"regex", atoms; `;` comments. */
function parse(text: string): Sexp[] {
  let at = 0;
  const read = (): Sexp => {
    const c = text[at];
    if (c === '(') {
      at++;
      const list: Sexp[] = [];
      for (;;) {
        skip();
        if (at >= text.length) throw new Error('unbalanced: a list is not closed');
        if (text[at] === ')') {
          at++;
          return list;
        }
        list.push(read());
      }
    }
    if (c === '"' || (c === '#' && text[at + 1] === '"')) {
      if (c === '#') at++;
      at++;
      let out = '';
      while (text[at] !== '"') {
        if (at >= text.length) throw new Error('unterminated string');
        if (text[at] === '\\') at++;
        out += text[at++];
      }
      at++;
      return `str:${out}`;
    }
    if (c === ')') throw new Error(`unbalanced: ) at ${at}`);
    const atom = /^[^\s()"]+/.exec(text.slice(at))?.[0] ?? '';
    at += atom.length;
    return atom;
  };
  const skip = (): void => {
    for (;;) {
      while (at < text.length && /\s/.test(text[at] ?? '')) at++;
      if (text[at] !== ';') return;
      while (at < text.length && text[at] !== '\n') at++;
    }
  };
  const forms: Sexp[] = [];
  for (skip(); at < text.length; skip()) forms.push(read());
  return forms;
}

/** The rules as [action, operation, filters] in profile order. */
function rules(profile: string): Array<{ action: string; op: string; filters: Sexp[] }> {
  return parse(profile)
    .filter((form): form is Sexp[] => Array.isArray(form) && (form[0] === 'allow' || form[0] === 'deny'))
    .map((form) => ({ action: form[0] as string, op: form[1] as string, filters: form.slice(2) }));
}

/** The index of the last rule for `op` with a filter `(kind "path")`, as Seatbelt would pick it. */
function decides(profile: string, op: string, kind: string, path: string): string | undefined {
  const found = rules(profile).filter(
    (rule) =>
      rule.op === op &&
      (rule.filters.length === 0 || rule.filters.some((f) => Array.isArray(f) && f[0] === kind && f[1] === `str:${path}`)),
  );
  return found.at(-1)?.action;
}

function fixture() {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'crystal-seatbelt-')));
  const workspace = join(root, 'ws');
  const userHome = join(root, 'home');
  mkdirSync(join(workspace, '.git', 'hooks'), { recursive: true });
  writeFileSync(join(workspace, '.git', 'config'), '[core]\n');
  mkdirSync(join(userHome, '.ssh'), { recursive: true });
  const policy: SandboxPolicy = {
    writable: [workspace],
    readOnly: protectedWorkspacePaths(workspace),
    hidden: credentialPaths(userHome),
    network: false,
  };
  return { root, workspace, userHome, policy };
}

describe('SBX-1 the Seatbelt profile for macOS (sandbox-exec), checked on Linux', () => {
  it('SBX-1 seatbelt: well formed, deny by default, reads allowed but the hidden credential paths denied after', () => {
    const f = fixture();
    const profile = seatbeltProfile(f.policy, { temps: ['/tmp'] });
    const all = rules(profile);
    expect(parse(profile)[0]).toEqual(['version', '1']);
    expect(all[0]).toEqual({ action: 'deny', op: 'default', filters: [] });
    expect(decides(profile, 'file-read*', 'subpath', join(f.userHome, '.ssh'))).toBe('deny');
    expect(decides(profile, 'file-read*', 'subpath', join(f.userHome, '.netrc'))).toBe('deny');
    expect(decides(profile, 'file-read*', 'subpath', '/usr')).toBe('allow');
    // Only in the sandbox: a signal or a process inspection of anything outside has no rule.
    expect(all.find((r) => r.op === 'signal')?.filters).toEqual([['target', 'same-sandbox']]);
  });

  it('SBX-1 seatbelt: writes only in the workspace and temp; .git/hooks, .git/config and .crystal stay read-only and cannot be moved away', () => {
    const f = fixture();
    const profile = seatbeltProfile(f.policy, { temps: ['/tmp'] });
    const writes = rules(profile).filter((r) => r.op === 'file-write*');
    expect(writes[0]?.action).toBe('allow');
    const allowed = (writes[0]?.filters ?? []).filter((x) => Array.isArray(x) && x[0] === 'subpath').map((x) => x[1]);
    expect(allowed).toEqual([`str:${f.workspace}`, `str:${realpathSync('/tmp')}`]);
    expect(decides(profile, 'file-write*', 'subpath', f.workspace)).toBe('allow');
    expect(decides(profile, 'file-write*', 'subpath', '/etc')).toBeUndefined();
    for (const path of ['.git/hooks', '.git/config', '.crystal']) {
      expect(decides(profile, 'file-write*', 'subpath', join(f.workspace, path))).toBe('deny');
    }
    // Renaming .git (or .git/hooks) away and making a new one would undo the read-only rule.
    for (const path of ['.git', '.git/hooks', '.git/config', '.crystal']) {
      expect(decides(profile, 'file-write-unlink', 'literal', join(f.workspace, path))).toBe('deny');
    }
    expect(decides(profile, 'file-write-unlink', 'literal', f.workspace)).toBeUndefined();
  });

  it('SBX-1 seatbelt: network off allows no network at all; the proxy allows only localhost:<port>; network on allows it', () => {
    const f = fixture();
    const off = rules(seatbeltProfile(f.policy, { temps: [] }));
    expect(off.filter((r) => r.op.startsWith('network') || r.op === 'system-socket')).toEqual([]);
    const proxied = rules(seatbeltProfile(f.policy, { temps: [], proxyPort: 41234 }));
    expect(proxied.filter((r) => r.op.startsWith('network'))).toEqual([
      { action: 'allow', op: 'network-outbound', filters: [['remote', 'ip', 'str:localhost:41234']] },
    ]);
    const on = rules(seatbeltProfile({ ...f.policy, network: true }, { temps: [], proxyPort: 41234 }));
    expect(on.filter((r) => r.op.startsWith('network'))).toEqual([{ action: 'allow', op: 'network*', filters: [] }]);
  });

  it('SBX-1 seatbelt: paths are written resolved (Seatbelt sees /private/tmp, not /tmp), a hidden link as itself and its target', () => {
    const f = fixture();
    const linked = join(f.root, 'ws-link');
    symlinkSync(f.workspace, linked);
    const keys = join(f.root, 'keys');
    mkdirSync(keys);
    symlinkSync(keys, join(f.userHome, '.gnupg'));
    const profile = seatbeltProfile({ ...f.policy, writable: [linked] }, { temps: [] });
    expect(decides(profile, 'file-write*', 'subpath', f.workspace)).toBe('allow');
    expect(decides(profile, 'file-write*', 'subpath', linked)).toBeUndefined();
    expect(decides(profile, 'file-read*', 'subpath', keys)).toBe('deny');
    expect(decides(profile, 'file-read*', 'subpath', join(f.userHome, '.gnupg'))).toBe('deny');
  });

  it('SBX-1 seatbelt: a hostile folder name cannot add a rule (quotes and backslashes are escaped)', () => {
    const f = fixture();
    const hostile = join(f.root, 'x") (allow file-write* (subpath "/") ;\\');
    const profile = seatbeltProfile({ ...f.policy, writable: [hostile] }, { temps: [] });
    const writes = rules(profile).filter((r) => r.action === 'allow' && r.op === 'file-write*');
    expect(writes).toHaveLength(1);
    expect(writes[0]?.filters.filter((x) => Array.isArray(x) && x[0] === 'subpath')).toEqual([['subpath', `str:${hostile}`]]);
    expect(decides(profile, 'file-write*', 'subpath', '/')).toBeUndefined();
  });

  it('SBX-1 seatbelt: the wrapped command is sandbox-exec -p <profile> -- argv, with the proxy variables only when proxied', () => {
    const f = fixture();
    const env = { PATH: '/usr/bin:/bin', NO_PROXY: '*' };
    const proxied = wrapSeatbelt(
      { argv: ['/bin/bash', '-c', 'true'], env, policy: f.policy },
      { sandboxExec: '/usr/bin/sandbox-exec', temps: [], proxyPort: 41234 },
    );
    expect(proxied.file).toBe('/usr/bin/sandbox-exec');
    expect(proxied.args[0]).toBe('-p');
    expect(proxied.args.slice(2)).toEqual(['--', '/bin/bash', '-c', 'true']);
    expect(proxied.args[1]).toBe(seatbeltProfile(f.policy, { temps: [], proxyPort: 41234 }));
    expect(proxied.env).toMatchObject({ HTTPS_PROXY: 'http://127.0.0.1:41234', HTTP_PROXY: 'http://127.0.0.1:41234' });
    expect(proxied.env.NO_PROXY).toBeUndefined();
    const off = wrapSeatbelt({ argv: ['true'], env, policy: f.policy }, { sandboxExec: '/usr/bin/sandbox-exec', temps: [] });
    expect(off.env).toEqual(env);
  });
});
