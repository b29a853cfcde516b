/**
 * REL-7 (issue 13 item 7): a 200 answer whose body is an HTML page or a JSON error document is
 * classified from its content, not retried as an incomplete stream.
 */
import { FakeProvider, type FakeReply } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { createChatClient, type Protocol } from '../src/index.js';
import { failure } from './stream-helpers.js';

let fake: FakeProvider | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function client(protocol: Protocol, reply: FakeReply) {
  fake = await FakeProvider.start({ wire: protocol, replies: [reply], whenExhausted: 'error' });
  return createChatClient(
    { name: 'acme', protocol, baseUri: fake.baseUriFor(protocol), apiKey: 'sk-rel7' },
    { id: 'acme-model' },
  );
}

const HTML = `<!DOCTYPE html>
<html><head><title>Access denied by corporate proxy</title></head>
<body><h1>Access denied</h1><p>Contact IT.</p></body></html>`;

const QUOTA = JSON.stringify({
  error: {
    type: 'insufficient_quota',
    code: 'insufficient_quota',
    message: 'You exceeded your current quota, please check your plan.',
  },
});

const protocols: Protocol[] = ['openai', 'responses', 'anthropic', 'gemini', 'ollama'];

describe('REL-7 a 200 that is not a stream', () => {
  for (const protocol of protocols) {
    it(`REL-7 ${protocol}: a 200 JSON insufficient_quota document is quota, not retried`, async () => {
      const c = await client(protocol, { raw: { status: 200, contentType: 'application/json', body: QUOTA } });
      const error = await failure(c);
      expect(error.kind).toBe('quota');
      expect(error.retryable).toBe(false);
      expect(error.message).toContain('You exceeded your current quota');
    });

    it(`REL-7 ${protocol}: a 200 HTML page is a provider error naming the status and its first line`, async () => {
      const c = await client(protocol, { raw: { status: 200, contentType: 'text/html; charset=utf-8', body: HTML } });
      const error = await failure(c);
      expect(error.kind).not.toBe('incomplete_stream');
      expect(error.retryable).toBe(false);
      expect(error.message).toContain('HTTP 200');
      expect(error.message).toContain('Access denied by corporate proxy');
      expect(error.message).not.toContain('<html>');
    });
  }

  it('REL-7 an HTML page sent as text/event-stream is still recognised', async () => {
    const c = await client('openai', { raw: { status: 200, contentType: 'text/event-stream', body: HTML } });
    const error = await failure(c);
    expect(error.retryable).toBe(false);
    expect(error.message).toContain('HTML page');
  });

  it('REL-7 a 502 HTML page from a proxy names the status and first line, not the markup', async () => {
    const c = await client('anthropic', { raw: { status: 502, contentType: 'text/html', body: HTML } });
    const error = await failure(c);
    expect(error.kind).toBe('server');
    expect(error.message).toContain('HTTP 502');
    expect(error.message).toContain('Access denied by corporate proxy');
    expect(error.message).not.toContain('<!DOCTYPE');
  });
});
