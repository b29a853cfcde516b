import { mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ParsedToolCall, ToolResultPart } from '@crystal/core';
import { describe, expect, it } from 'vitest';
import { homeConfigMemo } from '../src/index.js';
import { findRipgrep } from '../src/tools/builtin/ripgrep.js';
import { run } from './security-helpers.js';

const KEY = 'sk-live-THE-LITERAL-KEY-0123456789';
let id = 0;
function call(name: string, input: Record<string, unknown>): ParsedToolCall {
  return { id: `h${++id}`, name, arguments: JSON.stringify(input), input };
}
const textOf = (result: ToolResultPart | undefined): string =>
  result?.content.map((p) => (p.type === 'text' ? p.text : '')).join('') ?? '';

/** `crystal` run in `~`: the workspace is the user's home and Crystal Home is `~/.crystal` inside it. */
function userHome() {
  const ws = realpathSync(mkdtempSync(join(tmpdir(), 'crystal-sec3-')));
  const home = join(ws, '.crystal');
  mkdirSync(join(home, 'sessions'), { recursive: true });
  writeFileSync(
    join(home, 'config.json'),
    JSON.stringify({ provider: 'x', providers: { x: { protocol: 'openai', baseUri: 'http://127.0.0.1:1/', apiKey: KEY } } }),
  );
  writeFileSync(join(home, 'credentials.json'), JSON.stringify({ x: KEY }));
  writeFileSync(join(home, 'permissions.json'), '{"grants": []}\n');
  writeFileSync(join(home, 'sessions', 's1.json'), JSON.stringify({ note: `pasted ${KEY}` }));
  // The validated copy of config.json (issue 22) holds the same key.
  const text = readFileSync(join(home, 'config.json'), 'utf8');
  homeConfigMemo(home, 'b0b0b0b0b0b0b0b0')?.remember(join(home, 'config.json'), text, JSON.parse(text), []);
  mkdirSync(join(ws, 'project'));
  writeFileSync(join(ws, 'project', 'a.ts'), 'const x = 1;\n');
  return { ws, home };
}

const searchers: ReadonlyArray<[string, string | null]> = [
  ['the walker', null],
  ...(findRipgrep() ? ([['ripgrep', findRipgrep()]] as Array<[string, string | null]>) : []),
];

describe('Crystal Home inside the workspace (SEC-3)', () => {
  for (const [label, rg] of searchers) {
    it(`SEC-3 with ${label}: read, grep, glob and list never give the model Home's key, even when every ask is approved`, async () => {
      const { ws, home } = userHome();
      const h = run('full', ws, home, 'once', rg);
      const results: string[] = [];
      for (const c of [
        call('read', { path: '.crystal/config.json' }),
        call('read', { path: join(home, 'credentials.json') }),
        call('grep', { pattern: 'sk-live' }),
        call('grep', { pattern: 'sk-live', path: '.crystal' }),
        call('glob', { pattern: '**/*.json' }),
        call('list', { path: '.crystal' }),
        call('read', { path: '.crystal/cache/validated-config-b0b0b0b0b0b0b0b0.json' }),
        call('grep', { pattern: 'sk-live', path: join(home, 'cache') }),
      ]) {
        results.push(textOf(await h.call(c)));
      }
      expect(readFileSync(join(home, 'cache', 'validated-config-b0b0b0b0b0b0b0b0.json'), 'utf8')).toContain(KEY);
      for (const text of results) expect(text).not.toContain(KEY);
      expect(results[0]).toContain('refused');
      expect(results[1]).toContain('refused');
      expect(results[6]).toContain('refused');
      // The workspace walk does not enter Home: no session file, config or permissions listed.
      expect(results[4]).not.toContain('.crystal');
      expect(results[2]).toBe('No matches.');
      // Every call that reached into Home asked first, though the mode is full.
      const asked = h.asked.map((r) => r.card.summary);
      expect(asked.filter((s) => s.includes('Crystal Home')).length).toBeGreaterThanOrEqual(2);
    });
  }

  it('SEC-3 a write to permissions.json asks in full mode (Once or Deny only) and a deny leaves it unchanged', async () => {
    const { ws, home } = userHome();
    const h = run('full', ws, home, 'deny');
    const grant = '{"grants": [{"workspace": "/", "tool": "bash", "fingerprint": "rm -rf /"}]}';
    for (const c of [
      call('write', { path: '.crystal/permissions.json', contents: grant }),
      call('edit', { path: join(home, 'permissions.json'), old_string: '[]', new_string: '[{}]' }),
      call('write', { path: '.crystal/trusted.json', contents: '{"trusted": ["/"]}' }),
      call('bash', { command: 'cat .crystal/config.json' }),
      call('bash', { command: 'cat ./.cr*/config.json' }),
      call('bash', { command: `cat "${ws}"/.crystal/credentials.json` }),
      call('bash', { command: 'echo $(cat .crystal/config.json)' }),
      call('bash', { command: `echo '${grant}' > ${home}/permissions.json` }),
    ]) {
      const before = h.asked.length;
      expect((await h.call(c))?.isError, c.arguments).toBe(true);
      expect(h.asked.length, c.arguments).toBe(before + 1);
      const request = h.asked.at(-1);
      expect(request?.card.summary, c.arguments).toContain('Crystal Home');
      expect(request?.choices).toEqual(['once', 'deny']);
    }
    expect(readFileSync(join(home, 'permissions.json'), 'utf8')).toBe('{"grants": []}\n');
  });

  it('SEC-3 config.json and credentials.json are refused even when the operator approves the write', async () => {
    const { ws, home } = userHome();
    const h = run('full', ws, home, 'once');
    const result = await h.call(call('write', { path: '.crystal/config.json', contents: '{"providers": {}}' }));
    expect(result?.isError).toBe(true);
    expect(textOf(result)).toContain('refused');
    expect(readFileSync(join(home, 'config.json'), 'utf8')).toContain(KEY);
  });
});
