import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeProvider, fakeConfig, runCrystal, type TempHome, tempHome } from '@crystal/testkit';
import sharp from 'sharp';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';

let fake: FakeProvider | undefined;
let home: TempHome | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
  home?.dispose();
  home = undefined;
});

const dir = mkdtempSync(join(tmpdir(), 'crystal-run-images-'));
let png: Buffer;
let jpeg: Buffer;
beforeAll(async () => {
  png = await sharp({ create: { width: 32, height: 24, channels: 3, background: { r: 200, g: 10, b: 10 } } })
    .png()
    .toBuffer();
  jpeg = await sharp({ create: { width: 40, height: 30, channels: 3, background: { r: 10, g: 10, b: 200 } } })
    .jpeg()
    .toBuffer();
  writeFileSync(join(dir, 'a.png'), png);
  writeFileSync(join(dir, 'b.jpg'), jpeg);
});

function imageConfig(protocol: string) {
  const config = fakeConfig((fake as FakeProvider).baseUriFor(protocol), {}, protocol);
  const model = (config.providers as Record<string, { models: Record<string, Record<string, unknown>> }>).fake?.models[
    'fake-model'
  ];
  if (model) model.imageInput = true;
  return config;
}

/** The base64 of every image in a recorded request body, in order, whatever the wire. */
function imagesInBody(body: unknown): string[] {
  const found: string[] = [];
  const walk = (value: unknown): void => {
    if (typeof value === 'string') {
      const data = /^data:image\/[a-z]+;base64,(.+)$/.exec(value);
      if (data) found.push(data[1] as string);
      else if (value.length > 100 && /^[A-Za-z0-9+/=]+$/.test(value)) found.push(value);
      return;
    }
    if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === 'object') Object.values(value).forEach(walk);
  };
  walk(body);
  return found;
}

describe('crystal run --image', () => {
  for (const protocol of ['anthropic', 'gemini', 'ollama']) {
    it(`IMG-1 IMG-9 IMG-10 sends both images in order over the ${protocol} wire, stores them 0600, and the session JSON holds no Base64`, async () => {
      fake = await FakeProvider.start({ wire: protocol, replies: [{ text: 'a red and a blue box' }] });
      home = tempHome(imageConfig(protocol));
      const result = await runCrystal(
        ['run', '--format', 'json', '--image', join(dir, 'a.png'), '--image', join(dir, 'b.jpg'), 'compare'],
        { home: home.path },
      );
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      const sent = imagesInBody(fake.requests[0]?.body);
      expect(sent).toHaveLength(2);
      // Small images go out unchanged, byte for byte, in the order given.
      expect(sent[0]).toBe(png.toString('base64'));
      expect(sent[1]).toBe(jpeg.toString('base64'));
      const media = join(home.path, 'media');
      expect(statSync(media).mode & 0o777).toBe(0o700);
      const files = readdirSync(media);
      expect(files).toHaveLength(2);
      for (const f of files) expect(statSync(join(media, f)).mode & 0o777).toBe(0o600);
      const sessionDir = join(home.path, 'sessions');
      const saved = readdirSync(sessionDir)
        .map((f) => readFileSync(join(sessionDir, f), 'utf8'))
        .join('\n');
      expect(saved).not.toContain(png.toString('base64').slice(0, 40));
      expect(saved).toContain('contentHash');
    });
  }

  it('IMG-3 a look-alike marker typed into the run prompt (argument or stdin) stays plain text and sends no image', async () => {
    fake = await FakeProvider.start({
      wire: 'anthropic',
      replies: [{ text: 'a red box' }, { text: 'plain' }, { text: 'plain' }],
    });
    home = tempHome(imageConfig('anthropic'));
    const first = await runCrystal(['run', '--format', 'json', '--image', join(dir, 'a.png'), 'describe'], { home: home.path });
    expect(first.code).toBe(0);
    expect(imagesInBody(fake.requests[0]?.body)).toHaveLength(1);
    const id = JSON.parse(first.stdout).sessionId as string;
    const lookAlike = 'typed \u2063[Image #1] text';
    const byArgument = await runCrystal(['run', '--format', 'json', '--resume', id, lookAlike], { home: home.path });
    expect(byArgument.code).toBe(0);
    const byStdin = await runCrystal(['run', '--format', 'json', '--resume', id], { home: home.path, input: lookAlike });
    expect(byStdin.code).toBe(0);
    for (const request of [fake.requests[1], fake.requests[2]]) {
      const messages = (request?.body as { messages: Array<{ role: string; content: unknown }> }).messages;
      const last = JSON.stringify(messages.at(-1)?.content);
      // Only the first message's real attachment is an image; the typed marker is plain text.
      expect(imagesInBody(request?.body)).toHaveLength(1);
      expect(last).toContain('typed [Image #1] text');
      expect(last).not.toContain('\u2063');
      expect(last).not.toContain('base64');
    }
  });

  it('MODEL-1 a model without imageInput refuses --image before any request', async () => {
    fake = await FakeProvider.start({ replies: [{ text: 'never' }] });
    home = tempHome(fakeConfig(fake.baseUri));
    const result = await runCrystal(['run', '--image', join(dir, 'a.png'), 'look'], { home: home.path });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('imageInput');
    expect(fake.requests).toHaveLength(0);
  });

  it('IMG-8 a truncated image is refused with its name and nothing is stored', async () => {
    fake = await FakeProvider.start({ wire: 'anthropic', replies: [{ text: 'never' }] });
    home = tempHome(imageConfig('anthropic'));
    writeFileSync(join(dir, 'cut.png'), png.subarray(0, Math.floor(png.length / 2)));
    const result = await runCrystal(['run', '--image', join(dir, 'cut.png'), 'look'], { home: home.path });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('cut.png');
    expect(fake.requests).toHaveLength(0);
  });

  it('IMG-13 a damaged media file at resume gives one note and a working session; restoring the file repairs it', async () => {
    fake = await FakeProvider.start({ wire: 'anthropic', replies: [{ text: 'first' }, { text: 'second' }, { text: 'third' }] });
    home = tempHome(imageConfig('anthropic'));
    const first = await runCrystal(['run', '--format', 'json', '--image', join(dir, 'a.png'), 'look'], { home: home.path });
    const id = JSON.parse(first.stdout).sessionId;
    const media = join(home.path, 'media');
    const [file] = readdirSync(media) as [string];
    const original = readFileSync(join(media, file));
    writeFileSync(join(media, file), original.subarray(0, 20));
    const damaged = await runCrystal(['run', '--format', 'json', '--resume', id, 'again'], { home: home.path });
    expect(damaged.code).toBe(0);
    expect(damaged.stderr.match(/\[Image #1\]/g)?.length).toBe(1);
    expect(imagesInBody(fake.requests[1]?.body)).toHaveLength(0);
    writeFileSync(join(media, file), original);
    const repaired = await runCrystal(['run', '--format', 'json', '--resume', id, 'and now'], { home: home.path });
    expect(repaired.code).toBe(0);
    expect(imagesInBody(fake.requests[2]?.body)).toEqual([png.toString('base64')]);
  });
});

describe('crystal sessions and crystal export', () => {
  it('CLI-4 lists the sessions of this workspace newest first, all with --all, and as JSON', async () => {
    fake = await FakeProvider.start({ replies: [{ text: 'one' }, { text: 'two' }, { text: 'three' }] });
    home = tempHome(fakeConfig(fake.baseUri));
    const ws = mkdtempSync(join(tmpdir(), 'crystal-ws-a-'));
    const other = mkdtempSync(join(tmpdir(), 'crystal-ws-b-'));
    const a = JSON.parse((await runCrystal(['run', '--format', 'json', '-w', ws, 'first in a'], { home: home.path })).stdout);
    const b = JSON.parse((await runCrystal(['run', '--format', 'json', '-w', ws, 'second in a'], { home: home.path })).stdout);
    await runCrystal(['run', '--format', 'json', '-w', other, 'in b'], { home: home.path });
    const listed = await runCrystal(['sessions', '--json', '-w', ws], { home: home.path });
    expect(listed.code).toBe(0);
    const sessions = JSON.parse(listed.stdout);
    expect(sessions.map((s: { id: string }) => s.id)).toEqual([b.sessionId, a.sessionId]);
    expect(sessions[0]).toMatchObject({ title: 'second in a', messageCount: 2 });
    const all = JSON.parse((await runCrystal(['sessions', '--all', '--json'], { home: home.path })).stdout);
    expect(all).toHaveLength(3);
    const text = await runCrystal(['sessions', '-w', ws], { home: home.path });
    expect(text.stdout).toContain(a.sessionId);
  });

  it('CLI-5 IMG-15 export writes the JSON session with marker provenance and the image bytes inlined', async () => {
    fake = await FakeProvider.start({ wire: 'anthropic', replies: [{ text: 'seen' }] });
    home = tempHome(imageConfig('anthropic'));
    const run = JSON.parse(
      (await runCrystal(['run', '--format', 'json', '--image', join(dir, 'a.png'), 'look'], { home: home.path })).stdout,
    );
    const out = join(dir, 'export.json');
    const exported = await runCrystal(['export', run.sessionId, '--out', out], {
      home: home.path,
      env: { ANTHROPIC_API_KEY: undefined },
    });
    expect(exported.code).toBe(0);
    const json = JSON.parse(readFileSync(out, 'utf8'));
    expect(json.images).toEqual([expect.objectContaining({ number: 1, mimeType: 'image/png', data: png.toString('base64') })]);
    expect(JSON.stringify(json.archive)).toContain('\u2063[Image #1]');
    const missing = await runCrystal(['export', 'no-such-id'], { home: home.path });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("No saved session 'no-such-id'");
  });
});

describe('image tools in a turn', () => {
  it('IMG-24 IMG-18 view_image returns the file as image content that the model sees on the next round', async () => {
    fake = await FakeProvider.start({
      wire: 'anthropic',
      replies: [{ toolCalls: [{ id: 'v1', name: 'view_image', arguments: { path: 'shot.png' } }] }, { text: 'a red box' }],
    });
    home = tempHome(imageConfig('anthropic'));
    const ws = mkdtempSync(join(tmpdir(), 'crystal-ws-img-'));
    writeFileSync(join(ws, 'shot.png'), png);
    const result = await runCrystal(['run', '--format', 'json', '-w', ws, 'look at shot.png'], { home: home.path });
    expect(result.code).toBe(0);
    const names = ((fake.requests[0]?.body as { tools: Array<{ name: string }> }).tools ?? []).map((t) => t.name);
    expect(names).toContain('view_image');
    expect(imagesInBody(fake.requests[1]?.body)).toEqual([png.toString('base64')]);
  });

  it('IMG-22 a text-only model gets no view_image tool', async () => {
    fake = await FakeProvider.start({ replies: [{ text: 'ok' }] });
    home = tempHome(fakeConfig(fake.baseUri));
    await runCrystal(['run', 'hi'], { home: home.path });
    const names = ((fake.requests[0]?.body as { tools: Array<{ function: { name: string } }> }).tools ?? []).map(
      (t) => t.function.name,
    );
    expect(names).not.toContain('view_image');
    expect(names).toContain('read');
  });
});

describe('an image the provider refuses', () => {
  it('IMG-1 is replaced by its marker text with one note, and the round is sent once more instead of failing the session', async () => {
    fake = await FakeProvider.start({
      wire: 'anthropic',
      replies: [
        {
          error: {
            status: 400,
            body: {
              type: 'error',
              error: {
                type: 'invalid_request_error',
                message: 'messages.0.content.1.image.source.base64.data: Could not process image',
              },
            },
          },
        },
        { text: 'I could not see the image, but here is my answer.' },
        { text: 'a later turn works too' },
      ],
    });
    home = tempHome(imageConfig('anthropic'));
    const first = await runCrystal(['run', '--format', 'json', '--image', join(dir, 'a.png'), 'look'], { home: home.path });
    expect(first.code).toBe(0);
    expect(first.stderr).toContain('refused [Image #1]');
    expect(imagesInBody(fake.requests[0]?.body)).toHaveLength(1);
    expect(imagesInBody(fake.requests[1]?.body)).toHaveLength(0);
    expect(JSON.stringify(fake.requests[1]?.body)).toContain('[Image #1]');
    const id = JSON.parse(first.stdout).sessionId;
    const later = await runCrystal(['run', '--format', 'json', '--resume', id, 'next'], { home: home.path });
    expect(later.code).toBe(0);
  });

  it('REL-10 a symlink to /dev/zero, a FIFO and a folder are refused at once, before any read or request', async () => {
    fake = await FakeProvider.start({ wire: 'anthropic', replies: [{ text: 'never' }] });
    home = tempHome(imageConfig('anthropic'));
    const zero = join(dir, 'zero.png');
    rmSync(zero, { force: true });
    symlinkSync('/dev/zero', zero);
    const fifo = join(dir, 'pipe.png');
    rmSync(fifo, { force: true });
    execFileSync('mkfifo', [fifo]);
    const folder = mkdtempSync(join(dir, 'folder-'));
    const cases: [string, RegExp][] = [
      [zero, /is a character device, not an image file/],
      [fifo, /is a named pipe \(FIFO\), not an image file/],
      [folder, /is a folder, not an image file/],
    ];
    for (const [path, reason] of cases) {
      const result = await runCrystal(['run', '--image', path, 'look'], { home: home.path, timeoutMs: 20_000 });
      expect(result.signal, path).toBeNull();
      expect(result.code, path).toBe(1);
      expect(result.stderr, path).toMatch(reason);
      expect(result.stderr, path).toContain(`--image ${path}`);
    }
    expect(fake.requests).toHaveLength(0);
  });

  it('REL-10 a file over images.maxImageBytes is refused from its size, before it is read', async () => {
    fake = await FakeProvider.start({ wire: 'anthropic', replies: [{ text: 'never' }] });
    const config = imageConfig('anthropic');
    home = tempHome({ ...config, images: { maxImageBytes: 1000 } });
    const big = join(dir, 'big.png');
    writeFileSync(big, Buffer.concat([png, Buffer.alloc(2000)]));
    const result = await runCrystal(['run', '--image', big, 'look'], { home: home.path });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /--image .*big\.png: is [\d.]+ KiB, larger than the 1000 bytes an image may have \(images\.maxImageBytes\)/,
    );
    expect(fake.requests).toHaveLength(0);
  });

  it('REL-10 a batch with a bad member stores none of its images', async () => {
    fake = await FakeProvider.start({ wire: 'anthropic', replies: [{ text: 'never' }] });
    home = tempHome(imageConfig('anthropic'));
    writeFileSync(join(dir, 'cut2.png'), png.subarray(0, Math.floor(png.length / 2)));
    const result = await runCrystal(['run', '--image', join(dir, 'a.png'), '--image', join(dir, 'cut2.png'), 'look'], {
      home: home.path,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('cut2.png (image 2)');
    expect(fake.requests).toHaveLength(0);
    const media = join(home.path, 'media');
    expect(existsSync(media) ? readdirSync(media) : []).toEqual([]);
  });
});
