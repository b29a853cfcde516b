/**
 * The host over plain HTTP (the real `crystal web` binary): the token, Host and Origin guards
 * (WEBX-3), no listing and no path to the file system, the body limit derived from the
 * aggregate image limit (WEB-4), batch refusals that name the member (WEB-3), and the scoped
 * conversation face (WEB-11).
 */
import { request as httpRequest } from 'node:http';
import { FakeProvider, type TempHome, tempDir, tempHome } from '@crystal/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { imageConfig, inputFrame, mediaFiles, png, rawRequest, startCrystalWeb, type WebProcess } from './support.js';

const MAX_BATCH = 1024 * 1024;
/** packages/web/src/input-frame.ts: the aggregate limit, the 8-byte header and the 1 MiB manifest. */
const BODY_LIMIT = MAX_BATCH + 8 + 1024 * 1024;

let fake: FakeProvider;
let home: TempHome;
let web: WebProcess;
let auth: Record<string, string>;
let scope: string;

beforeAll(async () => {
  fake = await FakeProvider.start({ wire: 'openai', replies: [{ text: 'fine' }] });
  home = tempHome();
  home.writeConfig(imageConfig(fake, 'openai', { images: { maxBatchBytes: MAX_BATCH, maxImagesPerMessage: 3 } }));
  web = await startCrystalWeb({ home: home.path, workspace: tempDir('crystal-ws-') });
  auth = { authorization: `Bearer ${web.token}` };
  scope = (JSON.parse((await rawRequest(`${web.origin}/api/state`, { headers: auth })).body) as { scope: string }).scope;
});

afterAll(async () => {
  await web?.stop();
  await fake?.close();
  home?.dispose();
});

const send = (body: Buffer, headers: Record<string, string> = {}) =>
  rawRequest(`${web.origin}/api/send`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/x-crystal-input', ...headers },
    body,
  });

describe('crystal web host', () => {
  it('CLI-3 WEBX-3: listens on 127.0.0.1 at a free port and prints a URL with a long secret token', () => {
    expect(web.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{40,}$/);
    expect(web.port).toBeGreaterThan(0);
  });

  it('WEBX-3: every request without the token is refused, the page included', async () => {
    for (const path of ['/', '/index.html', '/api/state', '/api/events', `/api/history?scope=${scope}`]) {
      expect((await rawRequest(`${web.origin}${path}`)).status, path).toBe(401);
    }
    expect((await send(inputFrame(scope, { kind: 'message', text: 'hi' }), { authorization: '' })).status).toBe(401);
    expect((await rawRequest(`${web.origin}/?token=wrong`)).status).toBe(403);
    expect((await rawRequest(`${web.origin}/api/state`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(403);
    const cookie = `crystal_token_${web.port}=wrong`;
    expect((await rawRequest(`${web.origin}/api/state`, { headers: { cookie } })).status).toBe(403);
  });

  it('WEBX-3: the token URL trades the token for an HttpOnly SameSite=Strict cookie and leaves the address bar', async () => {
    const first = await rawRequest(web.url);
    expect(first.status).toBe(303);
    expect(first.headers.location).toBe('/');
    const setCookie = first.headers['set-cookie']?.[0] ?? '';
    expect(setCookie).toMatch(new RegExp(`^crystal_token_${web.port}=${web.token};`));
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Strict');
    const cookie = setCookie.split(';')[0] as string;
    const page = await rawRequest(`${web.origin}/`, { headers: { cookie } });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect((await rawRequest(`${web.origin}/api/state`, { headers: { cookie } })).status).toBe(200);
  });

  it('WEBX-3: a foreign Origin, a cross-site fetch or a foreign Host is refused even with the token', async () => {
    const frame = inputFrame(scope, { kind: 'message', text: 'from elsewhere' });
    for (const origin of ['http://evil.example', 'null', `http://127.0.0.1:${web.port + 1}`, `https://127.0.0.1:${web.port}`]) {
      const answer = await send(frame, { origin });
      expect(answer.status, origin).toBe(403);
      expect(answer.body).toContain('origin');
    }
    expect((await rawRequest(`${web.origin}/api/state`, { headers: { ...auth, origin: 'http://evil.example' } })).status).toBe(
      403,
    );
    expect((await rawRequest(`${web.origin}/api/state`, { headers: { ...auth, 'sec-fetch-site': 'cross-site' } })).status).toBe(
      403,
    );
    expect((await rawRequest(`${web.origin}/api/state`, { headers: { ...auth, 'sec-fetch-site': 'same-site' } })).status).toBe(
      403,
    );
    // DNS rebinding: the right socket under another name.
    const rebound = await rawRequest(`${web.origin}/api/state`, { headers: { ...auth, host: `evil.example:${web.port}` } });
    expect(rebound.status).toBe(403);
    expect(rebound.body).toContain('DNS rebinding');
    expect(fake.requests).toHaveLength(0);
    // This page's own origin, and the loopback names, pass.
    expect((await rawRequest(`${web.origin}/api/state`, { headers: { ...auth, origin: web.origin } })).status).toBe(200);
    expect((await rawRequest(`${web.origin}/api/state`, { headers: { ...auth, host: `localhost:${web.port}` } })).status).toBe(
      200,
    );
  });

  it('WEBX-3: no directory listing and no request path reaches the file system', async () => {
    const paths = [
      '/assets/',
      '/assets',
      '/../package.json',
      '/%2e%2e/%2e%2e/package.json',
      '/assets/..%2f..%2f..%2fpackage.json',
      '/assets/%2e%2e/%2e%2e/%2e%2e/package.json',
      '/..%5c..%5cpackage.json',
      '/etc/passwd',
      '/api/media/..%2f..%2fconfig.json',
      `/api/media/1?scope=${scope}`,
    ];
    for (const path of paths) {
      const answer = await rawRequest(`${web.origin}${path}`, { headers: auth });
      expect([400, 404], path).toContain(answer.status);
      expect(answer.body, path).not.toContain('"workspaces"');
      expect(answer.body, path).not.toContain('root:');
      expect(answer.body, path).not.toContain('apiKey');
    }
  });

  it('WEB-4: a declared body above the derived limit is refused before a byte is read', async () => {
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(`${web.origin}/api/send`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/x-crystal-input', 'content-length': String(BODY_LIMIT + 1) },
      });
      req.on('response', (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (d: string) => (body += d));
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, body });
          req.destroy();
        });
      });
      req.on('error', reject);
      req.flushHeaders();
    });
    expect(answer.status).toBe(413);
    const refusal = JSON.parse(answer.body) as { limit: number; received: number; rule: string; error: string };
    expect(refusal).toMatchObject({ limit: BODY_LIMIT, received: 0, rule: 'body_too_large' });
    expect(refusal.error).toContain('images.maxBatchBytes');
  });

  it('WEB-4: a streamed oversize body is refused before the host buffers beyond the derived limit', async () => {
    const total = 48 * 1024 * 1024;
    const chunk = Buffer.alloc(64 * 1024, 7);
    const result = await new Promise<{ status: number; body: string; sentWhenAnswered: number }>((resolve, reject) => {
      let sent = 0;
      let answered = false;
      const req = httpRequest(`${web.origin}/api/send`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/x-crystal-input' },
      });
      req.on('response', (res) => {
        answered = true;
        const sentWhenAnswered = sent;
        let body = '';
        res.setEncoding('utf8').on('data', (d: string) => (body += d));
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, body, sentWhenAnswered });
          req.destroy();
        });
      });
      req.on('error', (error) => {
        if (!answered) reject(error);
      });
      const pump = (): void => {
        while (!answered && sent < total) {
          sent += chunk.length;
          if (!req.write(chunk)) {
            req.once('drain', pump);
            return;
          }
        }
        if (!answered) req.end();
      };
      pump();
    });
    expect(result.status).toBe(413);
    const refusal = JSON.parse(result.body) as { limit: number; received: number };
    expect(refusal.limit).toBe(BODY_LIMIT);
    expect(refusal.received).toBeLessThanOrEqual(BODY_LIMIT);
    expect(result.sentWhenAnswered).toBeLessThan(total);
  });

  it('WEB-3 WEB-1: refusals name the member by position and name and the rule, and store nothing', async () => {
    const good = await png(40, 30, [10, 200, 10]);
    const cases: { images: Buffer[]; entries: Record<string, unknown>[]; expected: RegExp; kind: string }[] = [
      {
        images: [good, good],
        entries: [
          { name: 'one.png', type: 'image/png', size: good.length },
          { name: 'two.jpg', type: 'image/jpeg', size: good.length },
        ],
        expected: /^Image 2 \(two\.jpg\): /,
        kind: 'mime_mismatch',
      },
      {
        images: [good, good, good, good],
        entries: [1, 2, 3, 4].map((n) => ({ name: `p${n}.png`, type: 'image/png', size: good.length })),
        expected: /^Image 4 \(p4\.png\): a message takes at most 3 images/,
        kind: 'too_many_images',
      },
      {
        images: [good, Buffer.from('not an image at all')],
        entries: [
          { name: 'fine.png', type: 'image/png', size: good.length },
          { name: 'junk.png', type: 'image/png', size: 19 },
        ],
        expected: /^Image 2 \(junk\.png\): /,
        kind: 'unsupported_type',
      },
    ];
    for (const c of cases) {
      const answer = await send(inputFrame(scope, { kind: 'message', text: 'look', images: c.entries }, c.images));
      expect(answer.status, answer.body).toBe(422);
      const refusal = JSON.parse(answer.body) as { error: string; kind: string; position: number; name: string; rule: string };
      expect(refusal.error).toMatch(c.expected);
      expect(refusal.kind).toBe(c.kind);
      expect(refusal.rule.length).toBeGreaterThan(0);
      expect(mediaFiles(home.path)).toEqual([]);
    }
    expect(fake.requests).toHaveLength(0);
  });

  it('WEB-11: send, cancel and history are scoped to the session the page shows', async () => {
    const stale = await send(inputFrame('20200101-000000-000000', { kind: 'message', text: 'wrong place' }));
    expect(stale.status).toBe(409);
    expect(JSON.parse(stale.body)).toMatchObject({ scope });
    expect((await rawRequest(`${web.origin}/api/history?scope=other`, { headers: auth })).status).toBe(409);
    const cancel = await rawRequest(`${web.origin}/api/cancel`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ scope }),
    });
    expect(JSON.parse(cancel.body)).toEqual({ cancelled: false });
    const state = JSON.parse((await rawRequest(`${web.origin}/api/state`, { headers: auth })).body) as {
      inputs: { kinds: string[]; message: { imageTypes: string[]; limits: { maxBatchBytes: number }; imageInput: boolean } };
    };
    expect(state.inputs.kinds).toEqual(['message', 'approval', 'question', 'plan', 'queue']);
    expect(state.inputs.message).toMatchObject({ imageInput: true, limits: { maxBatchBytes: MAX_BATCH } });
    expect(state.inputs.message.imageTypes).toEqual(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);
    const wrongType = await rawRequest(`${web.origin}/api/send`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'text/plain' },
      body: 'hello',
    });
    expect(wrongType.status).toBe(415);
    expect((await send(inputFrame(scope, { kind: 'approval', id: 99, answer: 'once' }))).status).toBe(409);
  });
});
