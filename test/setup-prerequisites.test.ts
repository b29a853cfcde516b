import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');

/** A PATH holding links to every command on the real PATH except `without`. */
function pathWithout(without: readonly string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'crystal-path-'));
  const wanted = ['node', 'npm', 'chromium', 'Xvfb', 'xclip', 'rg', 'bwrap', 'socat', 'openssl', 'g++', 'make', 'python3', 'sh'];
  for (const command of wanted) {
    if (without.includes(command)) continue;
    const found = spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).stdout.trim();
    if (found) symlinkSync(found, join(dir, command));
  }
  return dir;
}

function runTestScript(path: string) {
  // The filter matches no test file, so even a broken check cannot start the whole suite here.
  return spawnSync(process.execPath, [join(root, 'scripts/test.mjs'), 'no-such-test-file-setup-5'], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, PATH: path },
  });
}

describe('test prerequisites (SETUP-5)', () => {
  it('SETUP-5 npm test on a machine without bwrap and rg stops at once with one line naming the packages', () => {
    const result = runTestScript(pathWithout(['bwrap', 'rg']));
    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      'npm test needs system packages that are missing: ripgrep (rg), bubblewrap (bwrap). Install with: sudo apt-get install -y ripgrep bubblewrap\n',
    );
  });

  for (const [command, apt] of [
    ['chromium', 'chromium'],
    ['Xvfb', 'xvfb'],
    ['xclip', 'xclip'],
    ['socat', 'socat'],
    ['openssl', 'openssl'],
  ] as const) {
    it(`SETUP-5 a missing ${command} names the package ${apt}`, () => {
      const result = runTestScript(pathWithout([command]));
      expect(result.status).toBe(1);
      expect(result.stderr).toContain(`missing: ${apt} (${command}).`);
    });
  }

  it('SETUP-5 with everything present the check passes silently and vitest starts', () => {
    const check = spawnSync(process.execPath, [join(root, 'scripts/prerequisites.mjs')], { encoding: 'utf8' });
    expect([check.status, check.stdout, check.stderr]).toEqual([0, '', '']);
    const result = runTestScript(process.env.PATH ?? '');
    expect(result.stderr).not.toContain('needs system packages');
    expect(`${result.stdout}${result.stderr}`).toContain('No test files found');
  });

  it('SETUP-5 npm test runs the check before the build, and CI installs every package it names', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
    expect(pkg.scripts.pretest).toBe('node scripts/prerequisites.mjs');
    const ci = readFileSync(join(root, '.ci/run'), 'utf8');
    for (const apt of ['chromium', 'xvfb', 'xclip', 'ripgrep', 'bubblewrap', 'socat', 'openssl'])
      expect(ci).toMatch(new RegExp(`need\\+=\\(${apt}\\)`));
    expect(delimiter).toBe(':');
  });
});
