/**
 * README drift check (SETUP-1..5): every command the README shows in a shell block is run by
 * .ci/run, run here (the cheap ones), or run by a named test that still exists; every JSON
 * block is a config.json the loader accepts; the terminal size it states is the one the
 * terminal enforces; the one install command is the list `npm test` checks.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parseConfigText } from '../packages/engine/src/index.js';
import { MIN_COLS, MIN_ROWS } from '../packages/tui/src/resize-notice.js';
// @ts-expect-error: a plain .mjs script without types
import { INSTALL_ALL } from '../scripts/prerequisites.mjs';

const root = join(import.meta.dirname, '..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const ci = readFileSync(join(root, '.ci/run'), 'utf8');
const run = promisify(execFile);

/** Where a README command is proven: a test file and the name of a test in it, or run here. */
type Proof = { readonly test: string; readonly name: string } | { readonly run: readonly string[] } | { readonly equals: string };

const PROOFS: Record<string, Proof> = {
  'npm ci': { test: '.ci/run', name: 'npm ci && npm test' },
  'npm test': { test: '.ci/run', name: 'npm ci && npm test' },
  'npx crystal demo --run': { run: ['demo', '--run'] },
  'npx crystal demo': { test: 'packages/cli/test/setup-first-hour.test.ts', name: 'SETUP-4 demo in the terminal' },
  'npm install -g .': { test: 'packages/cli/test/setup-install.test.ts', name: 'SETUP-1 npm install -g . from the checkout' },
  'crystal --version': { run: ['--version'] },
  'crystal login deepseek': {
    test: 'packages/cli/test/setup-first-hour.test.ts',
    name: 'SETUP-2 login reads the key from stdin',
  },
  'crystal models deepseek': {
    test: 'packages/cli/test/setup-first-hour.test.ts',
    name: 'SETUP-3 lists served models over HTTP',
  },
  'crystal run "explain this repository"': { test: 'packages/cli/test/run.test.ts', name: 'CLI-2 prints the streamed text' },
  'crystal models add openai gpt-4.1': {
    test: 'packages/cli/test/setup-first-hour.test.ts',
    name: 'adds one to config.json keeping its format',
  },
  'export DEEPSEEK_API_KEY=...': { test: 'packages/engine/test/config.test.ts', name: 'CONF-4 environment beats the config key' },
  'npx crystal run "explain this repository"': { test: 'packages/cli/test/run.test.ts', name: 'CLI-2 prints the streamed text' },
  'npx crystal run --format json "what is 2+2?"': { test: 'packages/cli/test/run.test.ts', name: 'CLI-2 --format json prints' },
  'echo "summarise README.md" | npx crystal run --format stream-json': {
    test: 'packages/cli/test/run.test.ts',
    name: 'CLI-2 stream-json prints one event per line',
  },
  'npx crystal run --resume <session-id> "and then?"': {
    test: 'packages/cli/test/run.test.ts',
    name: 'CLI-2 --resume continues a saved session',
  },
  'sudo apt-get install -y chromium xvfb xclip ripgrep bubblewrap socat openssl build-essential python3': { equals: INSTALL_ALL },
};

function blocks(lang: RegExp): string[] {
  return [...readme.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].filter((m) => lang.test(m[1] ?? '')).map((m) => m[2] as string);
}

/** Each command of the shell blocks, without its trailing comment, split at `&&`. */
function readmeCommands(): string[] {
  return blocks(/^(sh|bash|shell|console)$/)
    .flatMap((block) => block.split('\n'))
    .map((line) => line.replace(/\s+#\s.*$/, '').trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .flatMap((line) => line.split(' && ').map((part) => part.trim()));
}

describe('README drift check', () => {
  const commands = [...new Set(readmeCommands())];

  it('SETUP-1 every command the README shows is proven by .ci/run, a named test, or runs here', async () => {
    const unproven = commands.filter((c) => PROOFS[c] === undefined);
    expect(unproven, `README commands with no proof; add each to PROOFS in test/readme-drift.test.ts`).toEqual([]);
    const stale = Object.keys(PROOFS).filter((c) => !commands.includes(c));
    expect(stale, 'PROOFS entries the README no longer shows').toEqual([]);
    for (const command of commands) {
      const proof = PROOFS[command] as Proof;
      if ('test' in proof) {
        const text = readFileSync(join(root, proof.test), 'utf8');
        expect(text.includes(proof.name), `${command}: '${proof.name}' is not in ${proof.test}`).toBe(true);
      } else if ('equals' in proof) {
        expect(command).toBe(proof.equals);
      } else {
        const home = mkdtempSync(join(tmpdir(), 'crystal-readme-'));
        const result = await run(process.execPath, [join(root, 'packages/cli/bin/crystal.js'), ...proof.run], {
          cwd: home,
          env: { PATH: process.env.PATH ?? '', HOME: home, CRYSTAL_HOME: home, TMPDIR: home },
        });
        expect(result.stdout.length, command).toBeGreaterThan(0);
      }
    }
    expect(ci).toContain('npm ci && npm test');
  }, 60_000);

  it('SETUP-4 every JSON block in the README is a config.json the loader accepts', () => {
    const json = blocks(/^json$/);
    expect(json.length).toBeGreaterThanOrEqual(6);
    for (const text of json) expect(() => parseConfigText(text, 'README.md'), text).not.toThrow();
  });

  it('SETUP-4 the README states the terminal size the terminal enforces', () => {
    expect(readme).toContain(`at least ${MIN_COLS}x${MIN_ROWS}`);
  });

  it('SETUP-5 the README names every package npm test checks, in the command CI would run', () => {
    expect(readme).toContain(INSTALL_ALL);
  });
});
