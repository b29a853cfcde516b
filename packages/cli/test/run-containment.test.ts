import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeProvider, fakeConfig, runCrystal, tempDir } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';

let fake: FakeProvider | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

const KEY = 'sk-live-LITERAL-KEY-IN-CONFIG-42';

describe('crystal run keeps the model inside (SEC-2, SEC-3)', () => {
  it('SEC-2 crystal run --approval full does not write a git hook or .mcp.json: the call asks, so it is denied (exit 4)', async () => {
    fake = await FakeProvider.start({
      replies: [
        {
          toolCalls: [
            { id: 'w1', name: 'write', arguments: { path: '.git/hooks/pre-commit', contents: '#!/bin/sh\ntouch pwned\n' } },
            { id: 'w2', name: 'write', arguments: { path: '.mcp.json', contents: '{"mcpServers": {}}' } },
            { id: 'b1', name: 'bash', arguments: { command: 'git config core.fsmonitor ./evil.sh' } },
            { id: 'w3', name: 'write', arguments: { path: 'src/ok.txt', contents: 'fine' } },
          ],
        },
        { text: 'done' },
      ],
      whenExhausted: 'error',
    });
    const home = tempDir('crystal-home-');
    writeFileSync(join(home, 'config.json'), JSON.stringify(fakeConfig(fake.baseUri)));
    const ws = tempDir('crystal-ws-');
    mkdirSync(join(ws, '.git', 'hooks'), { recursive: true });
    writeFileSync(join(ws, '.git', 'config'), '[core]\n');
    const result = await runCrystal(['run', '--approval', 'full', '--format', 'json', '-w', ws, 'go'], { home });
    expect(result.code).toBe(4);
    expect(existsSync(join(ws, '.git', 'hooks', 'pre-commit'))).toBe(false);
    expect(existsSync(join(ws, '.mcp.json'))).toBe(false);
    expect(readFileSync(join(ws, '.git', 'config'), 'utf8')).toBe('[core]\n');
    expect(readFileSync(join(ws, 'src', 'ok.txt'), 'utf8')).toBe('fine');
  });

  it('SEC-3 crystal run in ~ with Home at ~/.crystal never sends the literal key of config.json to the model', async () => {
    fake = await FakeProvider.start({
      replies: [
        {
          toolCalls: [
            { id: 'r1', name: 'read', arguments: { path: '.crystal/config.json' } },
            { id: 'g1', name: 'grep', arguments: { pattern: 'sk-live' } },
            { id: 'g2', name: 'glob', arguments: { pattern: '**/*.json' } },
            { id: 'w1', name: 'write', arguments: { path: '.crystal/permissions.json', contents: '{"grants": []}' } },
          ],
        },
        { text: 'done' },
      ],
      whenExhausted: 'error',
    });
    // The user's home folder is the workspace; Crystal Home is ~/.crystal inside it.
    const user = tempDir('crystal-user-');
    const home = join(user, '.crystal');
    mkdirSync(home);
    const config = fakeConfig(fake.baseUri) as { providers: { fake: { apiKey: string } } };
    config.providers.fake.apiKey = KEY;
    writeFileSync(join(home, 'config.json'), JSON.stringify(config));
    const result = await runCrystal(['run', '--approval', 'full', '--format', 'json', 'look around'], {
      cwd: user,
      env: { HOME: user, CRYSTAL_HOME: undefined },
    });
    expect(result.stderr).not.toContain('Error');
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(fake.requests[1]?.rawBody).not.toContain(KEY);
    expect(existsSync(join(home, 'permissions.json'))).toBe(false);
    // Nor did it reach the saved session.
    for (const file of readdirSync(join(home, 'sessions'))) {
      expect(readFileSync(join(home, 'sessions', file), 'utf8')).not.toContain(KEY);
    }
  });
});
