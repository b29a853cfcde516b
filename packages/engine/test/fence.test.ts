import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isCredentialPath, resolvePath } from '../src/tools/fence.js';

function workspace() {
  const base = mkdtempSync(join(tmpdir(), 'crystal-fence-'));
  const ws = join(base, 'ws');
  mkdirSync(join(ws, 'src'), { recursive: true });
  writeFileSync(join(ws, 'src', 'a.ts'), 'x');
  writeFileSync(join(base, 'secret.txt'), 'outside');
  symlinkSync(join(base, 'secret.txt'), join(ws, 'link-out'));
  symlinkSync(join(ws, 'src'), join(ws, 'link-in'));
  return { base, ws };
}

describe('workspace fence', () => {
  it('TOOLS-3 resolves relative paths against the workspace and keeps inside paths inside', () => {
    const { ws } = workspace();
    expect(resolvePath(ws, 'src/a.ts')).toMatchObject({ inside: true, display: 'src/a.ts', credential: false });
    expect(resolvePath(ws, '.')).toMatchObject({ inside: true, display: '.' });
    expect(resolvePath(ws, 'src/new/file.ts')).toMatchObject({ inside: true, display: 'src/new/file.ts' });
  });

  it('TOOLS-3 a path through .. or an absolute path outside is an outside path', () => {
    const { ws, base } = workspace();
    expect(resolvePath(ws, '../secret.txt')).toMatchObject({ inside: false, real: join(base, 'secret.txt') });
    expect(resolvePath(ws, 'src/../../secret.txt').inside).toBe(false);
    expect(resolvePath(ws, '/etc/passwd').inside).toBe(false);
    expect(resolvePath(ws, `${ws}-sibling/x`).inside).toBe(false);
  });

  it('TOOLS-3 symlinks are followed to their final target before the decision', () => {
    const { ws } = workspace();
    expect(resolvePath(ws, 'link-out').inside).toBe(false);
    expect(resolvePath(ws, 'link-in/a.ts')).toMatchObject({ inside: true, display: 'src/a.ts' });
  });

  it('TOOLS-3 recognises credential files: credentials.json, .env files, private keys, .ssh and .gnupg', () => {
    for (const p of [
      'credentials.json',
      '.crystal/credentials.json',
      '.env',
      '.env.local',
      'id_rsa',
      'keys/server.pem',
      '~/.ssh/config',
      'a/.gnupg/x',
    ]) {
      expect(isCredentialPath(p), p).toBe(true);
    }
    for (const p of ['.env.example', 'src/env.ts', 'README.md', 'package.json']) expect(isCredentialPath(p), p).toBe(false);
    const { ws } = workspace();
    expect(resolvePath(ws, '.env').credential).toBe(true);
    expect(resolvePath(ws, '~').real).toBe(homedir());
  });
});
