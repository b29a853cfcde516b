import { describe, expect, it } from 'vitest';
import { FakeProvider } from '../src/index.js';

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${url}v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

describe('fake provider', () => {
  it('records method, path, headers and body of every request', async () => {
    const fake = await FakeProvider.start({ replies: [{ text: 'hi' }] });
    try {
      const res = await post(fake.url, { model: 'm', messages: [] }, { 'x-probe': 'yes' });
      await res.text();
      expect(fake.requests[0]).toMatchObject({
        method: 'POST',
        path: '/v1/chat/completions',
        body: { model: 'm', messages: [] },
      });
      expect(fake.requests[0]?.headers['x-probe']).toBe('yes');
    } finally {
      await fake.close();
    }
  });

  it('streams real SSE framing ending with [DONE], and answers scripted errors with their headers', async () => {
    const fake = await FakeProvider.start({
      replies: [{ text: 'a b', usage: { input: 1, output: 2 } }, { error: { status: 429, headers: { 'retry-after': '7' } } }],
    });
    try {
      const ok = await post(fake.url, { model: 'm' });
      expect(ok.headers.get('content-type')).toBe('text/event-stream');
      const body = await ok.text();
      expect(
        body
          .split('\n\n')
          .filter(Boolean)
          .every((e) => e.startsWith('data: ')),
      ).toBe(true);
      expect(body.trim().endsWith('data: [DONE]')).toBe(true);
      const limited = await post(fake.url, { model: 'm' });
      expect(limited.status).toBe(429);
      expect(limited.headers.get('retry-after')).toBe('7');
      expect(await limited.json()).toMatchObject({ error: { message: expect.any(String) } });
    } finally {
      await fake.close();
    }
  });

  it('cuts the connection after the scripted number of chunks', async () => {
    const fake = await FakeProvider.start({ replies: [{ textTokens: 50, dropAfter: 4 }] });
    try {
      const res = await post(fake.url, { model: 'm' });
      await expect(res.text()).rejects.toThrow();
    } finally {
      await fake.close();
    }
  });
});
