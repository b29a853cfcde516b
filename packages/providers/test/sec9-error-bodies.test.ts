/**
 * SEC-9 (error-body part of issue 12 hole 10): provider error bodies are capped and key-like
 * strings in them redacted before they reach a terminal or a file.
 */
import { FakeProvider, type FakeReply } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanErrorText, createChatClient, ERROR_TEXT_MAX_CHARS, type Protocol } from '../src/index.js';
import { failure } from './stream-helpers.js';

const OWN_KEY = 'my-own-provider-key-7f3a9c2e1b';
let fake: FakeProvider | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function client(protocol: Protocol, reply: FakeReply) {
  fake = await FakeProvider.start({ wire: protocol, replies: [reply], whenExhausted: 'error' });
  return createChatClient({ name: 'acme', protocol, baseUri: fake.baseUriFor(protocol), apiKey: OWN_KEY }, { id: 'acme-model' });
}

const SECRETS = [
  OWN_KEY,
  'sk-proj-AbCdEf0123456789XyZ',
  'eyJhbGciOiJIUzI1NiJ9.payload.signature123',
  'AIzaSyA1234567890abcdefghijklmnopqrs',
  'ghp_0123456789abcdefABCDEF0123456789abcd',
];

describe('SEC-9 provider error bodies', () => {
  for (const protocol of ['openai', 'anthropic', 'gemini'] as const) {
    it(`SEC-9 ${protocol}: keys and bearer tokens echoed in an error body are redacted`, async () => {
      const message =
        `Incorrect API key provided: ${OWN_KEY}. Also saw sk-proj-AbCdEf0123456789XyZ and ` +
        `Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.signature123, key=AIzaSyA1234567890abcdefghijklmnopqrs, ` +
        `"access_token": "ghp_0123456789abcdefABCDEF0123456789abcd"`;
      const c = await client(protocol, { error: { status: 401, message } });
      const error = await failure(c);
      expect(error.kind).toBe('auth');
      expect(error.message).toContain('Incorrect API key provided');
      expect(error.message).toContain('[redacted]');
      for (const secret of SECRETS) expect(error.message).not.toContain(secret);
    });
  }

  it('SEC-9 a huge error body is capped', async () => {
    const c = await client('openai', { error: { status: 500, message: `boom ${'y'.repeat(1_000_000)}` } });
    const error = await failure(c);
    expect(error.message.length).toBeLessThan(ERROR_TEXT_MAX_CHARS + 200);
  });

  it('SEC-9 a huge non-JSON error body is capped', async () => {
    const c = await client('anthropic', { raw: { status: 503, contentType: 'text/plain', body: 'z'.repeat(2_000_000) } });
    const error = await failure(c);
    expect(error.message.length).toBeLessThan(ERROR_TEXT_MAX_CHARS + 200);
  });

  it('SEC-9 cleanErrorText keeps ordinary text and redacts only key-like strings', () => {
    expect(cleanErrorText('model not found: gpt-9 (see https://example.com/docs)')).toBe(
      'model not found: gpt-9 (see https://example.com/docs)',
    );
    expect(cleanErrorText('api_key=0123456789abcdef0123456789abcdef')).toBe('api_key=[redacted]');
    const long = cleanErrorText(`detail ${'w'.repeat(10_000)}`);
    expect(long.length).toBeLessThan(ERROR_TEXT_MAX_CHARS + 100);
    expect(long).toContain('more characters cut');
  });
});
