import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeProvider, tempDir } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import {
  addModelToConfig,
  catalogEntryFor,
  type Config,
  discoverModels,
  loadConfig,
  selectModel,
  withServedOllamaModels,
} from '../src/index.js';

let fake: FakeProvider | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

function configFor(protocol: string, baseUri: string): Config {
  return {
    providers: {
      p: {
        protocol: protocol as 'openai',
        baseUri,
        apiKey: 'k1',
        models: { 'fake-model': { contextWindow: 1000 }, gone: { contextWindow: 5 } },
      },
    },
  };
}

describe('model discovery over each wire (SETUP-3)', () => {
  for (const protocol of ['openai', 'responses', 'deepseek', 'anthropic', 'gemini', 'ollama']) {
    it(`SETUP-3 lists what a ${protocol} server serves and marks the catalog`, async () => {
      fake = await FakeProvider.start({ wire: protocol, requireKey: 'k1' });
      const found = await discoverModels(tempDir(), configFor(protocol, fake.baseUriFor(protocol)), 'p', { env: {} });
      expect(found.served.map((m) => [m.id, m.inCatalog])).toEqual([
        ['fake-model', true],
        ['fake-large', false],
      ]);
      expect(found.notServed).toEqual(['gone']);
      const large = found.served[1];
      if (protocol === 'anthropic' || protocol === 'gemini' || protocol === 'ollama') {
        expect(large?.contextWindow).toBe(1000000);
      }
      if (protocol === 'ollama') expect(large?.imageInput).toBe(true);
      // The key went over the wire's own header.
      const first = fake.requests[0];
      const sent = first?.headers['x-api-key'] ?? first?.headers['x-goog-api-key'] ?? first?.headers.authorization;
      expect(sent).toMatch(/k1$/);
    });
  }

  it("SETUP-3 a wrong key is the provider's 401, classified as auth", async () => {
    fake = await FakeProvider.start({ wire: 'anthropic', requireKey: 'right' });
    await expect(discoverModels(tempDir(), configFor('anthropic', fake.url), 'p', { env: {} })).rejects.toMatchObject({
      kind: 'auth',
    });
  });

  it('SETUP-3 a hostile model list cannot put terminal escapes on the screen', async () => {
    fake = await FakeProvider.start({ models: [{ id: 'evil\u001b[2J\u001b]0;pwned\u0007' }, { id: 'ok-model' }] });
    const found = await discoverModels(tempDir(), configFor('openai', fake.baseUri), 'p', { env: {} });
    expect(found.served.map((m) => m.id)).toEqual(['ok-model']);
  });

  it('SETUP-3 a hung server is a timeout error, not a hang', async () => {
    const { createServer } = await import('node:http');
    const server = createServer(() => undefined);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as { port: number }).port;
    try {
      await expect(
        discoverModels(tempDir(), configFor('openai', `http://127.0.0.1:${port}/v1/`), 'p', { env: {}, timeoutMs: 300 }),
      ).rejects.toMatchObject({ kind: 'timeout' });
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('SETUP-3 local Ollama works with no configuration: served models and their real context windows', async () => {
    fake = await FakeProvider.start({
      wire: 'ollama',
      models: [{ id: 'llama3.2:3b', contextWindow: 131072 }],
    });
    const config: Config = { provider: 'ollama', providers: { ollama: { baseUri: fake.url } } };
    const before = loadConfigLike(config);
    // Without discovery, the starter's guess (a model this server does not have, 4096 tokens).
    expect(selectModel(before).model).toMatchObject({ id: 'qwen3:8b', contextWindow: 4096 });
    const ready = await withServedOllamaModels(tempDir(), config);
    const selection = selectModel(ready);
    expect(selection.model).toMatchObject({ id: 'llama3.2:3b', contextWindow: 131072 });
  });

  it('SETUP-3 adds a served model to config.json changing only that key', async () => {
    const home = tempDir();
    const text =
      '{\n    "provider":   "openai",\n    "model": "gpt-5.6-sol",   "workspaceTrust": false,\n    "providers": { "openai": { "apiKey": "x" } }\n}\n';
    writeFileSync(join(home, 'config.json'), text);
    await addModelToConfig(home, 'openai', 'gpt-4.1', catalogEntryFor({ id: 'gpt-4.1', contextWindow: 1047576 }));
    const after = readFileSync(join(home, 'config.json'), 'utf8');
    expect(after.startsWith('{\n    "provider":   "openai",\n    "model": "gpt-5.6-sol",   "workspaceTrust": false,\n')).toBe(
      true,
    );
    expect(loadConfig(home).providers?.openai).toEqual({ apiKey: 'x', models: { 'gpt-4.1': { contextWindow: 1047576 } } });
    // The starter models stay next to the added one.
    expect(selectModel(loadConfig(home), { provider: 'openai', model: 'gpt-5.6-luna' }).model.id).toBe('gpt-5.6-luna');
    expect(selectModel(loadConfig(home), { provider: 'openai', model: 'gpt-4.1' }).model.contextWindow).toBe(1047576);
  });
});

function loadConfigLike(config: Config): Config {
  return JSON.parse(JSON.stringify(config)) as Config;
}
