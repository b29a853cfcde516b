import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ParsedToolCall } from '@crystal/core';
import { describe, expect, it } from 'vitest';
import { fingerprintOf, GrantStore, grantFor, permissionsPath, readPermissions } from '../src/approval/index.js';
import { ConfigError } from '../src/errors.js';

const call = (name: string, input: Record<string, unknown>): ParsedToolCall => ({
  id: 'c1',
  name,
  arguments: JSON.stringify(input),
  input,
});

const home = (): string => mkdtempSync(join(tmpdir(), 'crystal-grants-'));

describe('approval grants', () => {
  it('APPR-2 fingerprints: the path with / for path tools, the exact command for bash, the name for other tools', () => {
    for (const name of ['write', 'edit', 'read', 'list', 'glob', 'grep', 'view_image', 'describe_image']) {
      expect(fingerprintOf(call(name, { path: 'src\\a\\b.ts' }))).toBe('src/a/b.ts');
    }
    expect(fingerprintOf(call('bash', { command: '  npm test  ' }))).toBe('  npm test  ');
    expect(fingerprintOf(call('fmt', { file: 'x' }))).toBe('fmt');
    expect(fingerprintOf(call('todowrite', { todos: [] }))).toBe('todowrite');
    expect(grantFor('/w/./ws', call('bash', { command: 'ls' }))).toEqual({ workspace: '/w/ws', tool: 'bash', fingerprint: 'ls' });
  });

  it('APPR-2 persistent grants are deduplicated, owner-only, and keep other keys of the file', async () => {
    const dir = home();
    const file = permissionsPath(dir);
    writeFileSync(file, JSON.stringify({ note: 'kept', grants: [{ workspace: '/w', tool: 'bash', fingerprint: 'ls' }] }), {
      mode: 0o644,
    });
    const store = new GrantStore(dir);
    expect(store.matches({ workspace: '/w', tool: 'bash', fingerprint: 'ls' })).toBe(true);
    await store.addPersistent({ workspace: '/w', tool: 'bash', fingerprint: 'ls' });
    await Promise.all([
      store.addPersistent({ workspace: '/w', tool: 'write', fingerprint: 'a.ts' }),
      store.addPersistent({ workspace: '/w', tool: 'write', fingerprint: 'a.ts' }),
      store.addPersistent({ workspace: '/w', tool: 'edit', fingerprint: 'b.ts' }),
    ]);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      note: 'kept',
      grants: [
        { workspace: '/w', tool: 'bash', fingerprint: 'ls' },
        { workspace: '/w', tool: 'write', fingerprint: 'a.ts' },
        { workspace: '/w', tool: 'edit', fingerprint: 'b.ts' },
      ],
    });
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('APPR-2 an Always grant merges with grants another session wrote meanwhile', async () => {
    const dir = home();
    const first = new GrantStore(dir);
    const second = new GrantStore(dir);
    await first.addPersistent({ workspace: '/w', tool: 'bash', fingerprint: 'a' });
    await second.addPersistent({ workspace: '/w', tool: 'bash', fingerprint: 'b' });
    expect(readPermissions(dir).grants.map((g) => g.fingerprint)).toEqual(['a', 'b']);
  });

  it('APPR-2 session grants stay in memory', () => {
    const dir = home();
    const store = new GrantStore(dir);
    store.addSession({ workspace: '/w', tool: 'bash', fingerprint: 'ls' });
    expect(store.matches({ workspace: '/w', tool: 'bash', fingerprint: 'ls' })).toBe(true);
    expect(store.matches({ workspace: '/other', tool: 'bash', fingerprint: 'ls' })).toBe(false);
    expect(new GrantStore(dir).matches({ workspace: '/w', tool: 'bash', fingerprint: 'ls' })).toBe(false);
    expect(() => statSync(permissionsPath(dir))).toThrow();
  });

  it('APPR-2 a missing or empty permissions.json holds no grants; a corrupt one is a ConfigError and stays as it was', async () => {
    const dir = home();
    expect(readPermissions(dir).grants).toEqual([]);
    writeFileSync(permissionsPath(dir), '\n');
    expect(readPermissions(dir).grants).toEqual([]);
    for (const bad of ['[1, 2]', '{"grants": {}}', '{"grants": [ {"tool": "bash"} ] ']) {
      writeFileSync(permissionsPath(dir), bad);
      expect(() => readPermissions(dir), bad).toThrow(ConfigError);
      expect(() => readPermissions(dir), bad).toThrow(permissionsPath(dir));
    }
    // A store created before the file went bad does not overwrite it either.
    writeFileSync(permissionsPath(dir), '{"grants": []}');
    const store = new GrantStore(dir);
    writeFileSync(permissionsPath(dir), '{"grants": [');
    await expect(store.addPersistent({ workspace: '/w', tool: 'bash', fingerprint: 'ls' })).rejects.toThrow(ConfigError);
    expect(readFileSync(permissionsPath(dir), 'utf8')).toBe('{"grants": [');
    expect(store.matches({ workspace: '/w', tool: 'bash', fingerprint: 'ls' })).toBe(true);
  });
});
