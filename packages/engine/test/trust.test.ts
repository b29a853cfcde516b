import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, isTrusted, trustRoot, trustWorkspace } from '../src/index.js';

describe('workspace trust (interactive surfaces)', () => {
  it('CLI-8 a yes is stored as the git root; subfolders of a trusted repository are trusted', async () => {
    const home = mkdtempSync(join(tmpdir(), 'crystal-trust-home-'));
    const repo = mkdtempSync(join(tmpdir(), 'crystal-trust-repo-'));
    mkdirSync(join(repo, '.git'));
    mkdirSync(join(repo, 'src', 'deep'), { recursive: true });
    expect(isTrusted(home, join(repo, 'src'))).toBe(false);
    expect(await trustWorkspace(home, join(repo, 'src', 'deep'))).toBe(trustRoot(home, repo));
    expect(isTrusted(home, repo)).toBe(true);
    expect(isTrusted(home, join(repo, 'src'))).toBe(true);
    expect(statSync(join(home, 'trusted.json')).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(join(home, 'trusted.json'), 'utf8')).trusted).toHaveLength(1);
  });

  it('CLI-8 outside a repository the directory itself is trusted; Home space is always trusted', () => {
    const home = mkdtempSync(join(tmpdir(), 'crystal-trust-home-'));
    const dir = mkdtempSync(join(tmpdir(), 'crystal-trust-dir-'));
    expect(trustRoot(home, dir)).toBe(trustRoot(home, dir));
    expect(isTrusted(home, dir)).toBe(false);
    mkdirSync(join(home, 'space'));
    expect(isTrusted(home, join(home, 'space'))).toBe(true);
  });

  it('a corrupt trusted.json names the file and is left unchanged', () => {
    const home = mkdtempSync(join(tmpdir(), 'crystal-trust-home-'));
    writeFileSync(join(home, 'trusted.json'), '{"trusted": [');
    expect(() => isTrusted(home, home)).toThrow(ConfigError);
    expect(readFileSync(join(home, 'trusted.json'), 'utf8')).toBe('{"trusted": [');
  });
});
