import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/** The allowed package imports of DESIGN.md: the TUI never imports the engine, core imports nothing. */
const allowed: Record<string, string[]> = {
  core: [],
  // The OS sandbox: wraps a command; never imports the engine (the engine composes it).
  sandbox: [],
  providers: ['core'],
  mcp: ['core'],
  engine: ['core', 'providers', 'sandbox', 'mcp'],
  tui: ['core'],
  web: ['core', 'engine'],
  testkit: ['core'],
  // testkit: `crystal demo` runs the bundled fake provider (SETUP-4).
  cli: ['core', 'providers', 'engine', 'tui', 'web', 'testkit'],
};

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe('package layering', () => {
  for (const [pkg, deps] of Object.entries(allowed)) {
    it(`${pkg} imports only ${deps.join(', ') || 'no other package'}`, () => {
      const root = join(import.meta.dirname, '..', 'packages', pkg);
      const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
      // The published CLI is one bundle: its workspace packages are build-time devDependencies (SETUP-1).
      const declared = Object.keys({ ...manifest.dependencies, ...(pkg === 'cli' ? manifest.devDependencies : {}) }).filter((d) =>
        d.startsWith('@crystal/'),
      );
      expect(declared.map((d) => d.slice(9)).sort()).toEqual([...deps].sort());
      for (const file of sources(join(root, 'src'))) {
        const text = readFileSync(file, 'utf8');
        for (const match of text.matchAll(/from '@crystal\/([a-z]+)|import\('@crystal\/([a-z]+)/g)) {
          const target = match[1] ?? match[2];
          expect(deps, `${file} imports @crystal/${target}`).toContain(target);
        }
      }
    });
  }

  it('core does no I/O', () => {
    for (const file of sources(join(import.meta.dirname, '..', 'packages', 'core', 'src'))) {
      expect(readFileSync(file, 'utf8'), file).not.toMatch(/from 'node:(fs|net|http|child_process)/);
    }
  });
});
