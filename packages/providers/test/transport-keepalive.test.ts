/**
 * Issue 22 item 1: the transport keeps connections alive between requests (a tool loop's
 * rounds reuse one connection instead of a new TCP and TLS handshake each), as fetch did.
 */
import { FakeProvider } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { createChatClient, createTransport, type Protocol } from '../src/index.js';
import { collect } from './stream-helpers.js';

let fake: FakeProvider | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

describe('keep-alive', () => {
  for (const protocol of ['openai', 'responses', 'anthropic', 'gemini', 'ollama'] as Protocol[]) {
    it(`${protocol}: three streamed requests in a row reuse one connection`, async () => {
      fake = await FakeProvider.start({ wire: protocol, replies: [{ text: 'one two three', usage: { input: 1, output: 3 } }] });
      const c = await createChatClient(
        { name: 'acme', protocol, baseUri: fake.baseUriFor(protocol), apiKey: 'k' },
        { id: 'acme-model' },
        { transport: createTransport({ env: {} }) },
      );
      for (let i = 0; i < 3; i++) expect((await collect(c)).at(-1)).toMatchObject({ type: 'finish' });
      expect(fake.requests).toHaveLength(3);
      expect(fake.connections).toBe(1);
    });
  }
});
