import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  AttachmentService,
  DEFAULT_IMAGE_LIMITS,
  exportSessionImages,
  formatBytes,
  ImageError,
  type ImageLimits,
  ImageRegistry,
  MediaStore,
  projectMessage,
  restoreSessionImages,
  type SaveOptions,
  type SessionImage,
  type StoredMedia,
  tagAttachedSpans,
  taggedMarker,
} from '../src/images/index.js';
import { cut, deferred, limits, makeImage, tempHome } from './images-fixtures.js';

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');
const mediaFiles = (home: string): string[] => (existsSync(join(home, 'media')) ? readdirSync(join(home, 'media')).sort() : []);

function service(
  home = tempHome(),
  imageLimits: ImageLimits = DEFAULT_IMAGE_LIMITS,
): { home: string; attachments: AttachmentService } {
  return { home, attachments: new AttachmentService({ store: MediaStore.forHome(home, imageLimits) }) };
}

async function refusal(promise: Promise<unknown>): Promise<ImageError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ImageError);
  return error as ImageError;
}

describe('attachment service', () => {
  it('WEB-10 the seam exposes its limits, storage-free validateImage, saveImage and readImage', async () => {
    const { home, attachments } = service(tempHome(), limits({ maxImagesPerMessage: 4 }));
    expect(attachments.limits.maxImagesPerMessage).toBe(4);
    const bytes = await makeImage('png', 30, 20);
    expect(await attachments.validateImage(bytes, { name: 'a.png' })).toMatchObject({ mime: 'image/png', width: 30, height: 20 });
    expect(mediaFiles(home)).toEqual([]);
    const saved = await attachments.saveImage(bytes, { mime: 'image/png' });
    expect(mediaFiles(home)).toEqual([saved.hash]);
    const read = await attachments.readImage(saved.hash, { mime: 'image/png' });
    expect(read.ok && read.bytes.equals(bytes)).toBe(true);
  });

  it('IMG-11 the media file is on disk before the session can reference the image', async () => {
    const home = tempHome();
    const registry = new ImageRegistry();
    const seenDuringSave: (SessionImage | undefined)[] = [];
    class WatchedStore extends MediaStore {
      override async save(bytes: Uint8Array, options?: SaveOptions): Promise<StoredMedia> {
        seenDuringSave.push(await registry.get(1));
        return super.save(bytes, options);
      }
    }
    const attachments = new AttachmentService({ store: new WatchedStore(join(home, 'media'), DEFAULT_IMAGE_LIMITS), registry });
    const bytes = await makeImage('jpeg', 40, 40, { noise: true });
    const attachment = await attachments.attach(bytes, { name: 'cat.jpg' });
    expect(seenDuringSave).toEqual([undefined]);
    expect(attachment).toEqual({
      number: 1,
      hash: sha256(bytes),
      mime: 'image/jpeg',
      name: 'cat.jpg',
      width: 40,
      height: 40,
      bytes: bytes.length,
    });
    expect(readFileSync(join(home, 'media', attachment.hash)).equals(bytes)).toBe(true);
    expect(await registry.get(1)).toMatchObject({ number: 1, hash: attachment.hash, draft: true, available: true });
  });

  it('IMG-11 when the media write fails, the session never references the image', async () => {
    const home = tempHome();
    writeFileSync(join(home, 'media'), 'a file where the media folder should be');
    const { attachments } = service(home);
    const error = await attachments.attach(await makeImage('png', 10, 10)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(await attachments.registry.list()).toEqual([]);
  });

  it('IMG-8 attach refuses a bad image with a named error and consumes no number', async () => {
    const { home, attachments } = service();
    const png = await makeImage('png', 20, 20, { noise: true });
    expect((await refusal(attachments.attach(png, { name: 'x.jpg' }))).kind).toBe('mime_mismatch');
    expect((await refusal(attachments.attach(cut(png, 0.5), { name: 'half.png' }))).message).toMatch(
      /^half\.png: the PNG image is truncated/,
    );
    expect(mediaFiles(home)).toEqual([]);
    expect((await attachments.attach(png)).number).toBe(1);
  });

  it('IMG-20 a paste reserves its number before awaiting the reader; a tool image meanwhile takes the next; a failed paste leaves a gap', async () => {
    const { attachments } = service();
    const reader = deferred<Buffer>();
    const paste = (async () => {
      const number = await attachments.reserveNumber();
      const bytes = await reader.promise;
      return attachments.attach(bytes, { number });
    })();
    const tool = await attachments.attach(await makeImage('png', 12, 12), { name: 'tool', draft: false });
    expect(tool.number).toBe(2);
    reader.reject(new Error('xclip: no image on the clipboard'));
    await expect(paste).rejects.toThrow('no image on the clipboard');
    const next = await attachments.attach(await makeImage('webp', 12, 12));
    expect(next.number).toBe(3);
    expect((await attachments.registry.list()).map((i) => i.number)).toEqual([2, 3]);
  });

  it('IMG-20 a paste that reserved first keeps its number even when it finishes last', async () => {
    const { attachments } = service();
    const reader = deferred<Buffer>();
    const paste = (async () => {
      const number = await attachments.reserveNumber();
      return attachments.attach(await reader.promise, { number });
    })();
    const later = await attachments.attach(await makeImage('png', 9, 9));
    reader.resolve(await makeImage('gif', 9, 9));
    expect((await paste).number).toBe(1);
    expect(later.number).toBe(2);
  });

  it('IMG-20 concurrent pastes, tool images and failures: numbers are unique, failures are gaps, nothing is reused', async () => {
    const { attachments } = service();
    const good = await makeImage('png', 16, 16, { noise: true });
    const bad = cut(good, 0.5);
    const jobs = Array.from({ length: 12 }, (_, i) =>
      i % 3 === 0
        ? (async () => {
            const number = await attachments.reserveNumber();
            return attachments.attach(bad, { number });
          })()
        : attachments.attach(good, { draft: i % 2 === 0 }),
    );
    const results = await Promise.allSettled(jobs);
    const numbers = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value.number] : []));
    expect(numbers.length).toBe(8);
    expect(new Set(numbers).size).toBe(8);
    expect(results.filter((r) => r.status === 'rejected').length).toBe(4);
    const listed = (await attachments.registry.list()).map((i) => i.number);
    expect(listed).toEqual([...numbers].sort((a, b) => a - b));
    // The 4 failed pastes reserved numbers too: 12 numbers were handed out, and none again.
    expect(attachments.registry.nextNumber).toBe(13);
    expect((await attachments.attach(good)).number).toBe(13);
  });

  it('IMG-20 a number can be registered only once, and only after it was reserved', async () => {
    const registry = new ImageRegistry();
    const image = { number: 1, mime: 'image/png', hash: 'a'.repeat(64), draft: false, available: true };
    await expect(registry.register(image)).rejects.toThrow('Image number 1 was never reserved.');
    await registry.reserveNumber();
    await registry.register(image);
    await expect(registry.register(image)).rejects.toThrow('Image number 1 is already in use.');
  });

  it('WEB-3 WEB-8 a batch whose 3rd image is truncated stores nothing, registers nothing, and names the member and the reason', async () => {
    const { home, attachments } = service();
    await attachments.attach(await makeImage('png', 5, 5));
    const before = mediaFiles(home);
    const items = [
      { bytes: await makeImage('png', 30, 30, { noise: true }), name: 'a.png' },
      { bytes: await makeImage('jpeg', 30, 30, { noise: true }), name: 'b.jpg' },
      { bytes: cut(await makeImage('webp', 60, 60, { noise: true }), 0.55), name: 'c.webp' },
      { bytes: await makeImage('gif', 30, 30), name: 'd.gif' },
    ];
    const error = await refusal(attachments.attachBatch(items));
    expect(error.kind).toBe('corrupt');
    expect(error.position).toBe(3);
    expect(error.imageName).toBe('c.webp');
    expect(error.message).toMatch(/^Image 3 \(c\.webp\): the WebP image is truncated or damaged/);
    expect(mediaFiles(home)).toEqual(before);
    expect((await attachments.registry.list()).map((i) => i.number)).toEqual([1]);
    expect(attachments.registry.nextNumber).toBe(2);
  });

  it('WEB-3 a valid batch is saved in submitted order under consecutive numbers, each block with its durable reference and name', async () => {
    const { home, attachments } = service();
    const items = [
      { bytes: await makeImage('webp', 10, 10), name: 'first.webp', declaredMime: 'image/webp' },
      { bytes: await makeImage('png', 11, 11), name: 'second.png' },
      { bytes: await makeImage('jpeg', 12, 12) },
    ];
    const batch = await attachments.attachBatch(items);
    expect(batch.map((a) => [a.number, a.name, a.mime, a.width])).toEqual([
      [1, 'first.webp', 'image/webp', 10],
      [2, 'second.png', 'image/png', 11],
      [3, undefined, 'image/jpeg', 12],
    ]);
    expect(batch.map((a) => a.hash)).toEqual(items.map((i) => sha256(i.bytes)));
    expect(mediaFiles(home)).toEqual(items.map((i) => sha256(i.bytes)).sort());
    expect((await attachments.registry.list()).every((i) => !i.draft)).toBe(true);
  });

  it('WEB-1 the batch bounds: count and aggregate bytes are refused before any decode, naming the member', async () => {
    const { home, attachments } = service(tempHome(), limits({ maxImagesPerMessage: 2, maxBatchBytes: 3000 }));
    const small = await makeImage('png', 8, 8);
    const count = await refusal(
      attachments.validateBatch([{ bytes: small }, { bytes: small }, { bytes: small, name: 'third.png' }]),
    );
    expect(count.kind).toBe('too_many_images');
    expect(count.message).toBe('Image 3 (third.png): a message takes at most 2 images; this one has 3.');
    const big = Buffer.concat([await makeImage('png', 4, 4), Buffer.alloc(2000)]);
    const total = await refusal(
      attachments.attachBatch([
        { bytes: big, name: 'one.png' },
        { bytes: big, name: 'two.png' },
      ]),
    );
    expect(total.kind).toBe('batch_too_large');
    expect(total.message).toBe(
      `Image 2 (two.png): the images of one message may total at most 2.9 KiB; with this image they reach ${formatBytes(big.length * 2)}.`,
    );
    const perImage = await refusal(
      service(tempHome(), limits({ maxImageBytes: 100 })).attachments.validateBatch([{ bytes: big, name: 'p.png' }]),
    );
    expect(perImage.kind).toBe('too_large');
    expect(perImage.position).toBe(1);
    expect(mediaFiles(home)).toEqual([]);
  });

  it('IMG-7 deleting an unsent marker discards the image at once; sent and tool images stay; the media file stays (IMG-16)', async () => {
    const { home, attachments } = service();
    const a = await attachments.attach(await makeImage('png', 6, 6));
    const b = await attachments.attach(await makeImage('jpeg', 6, 6));
    const tool = await attachments.attach(await makeImage('gif', 6, 6), { draft: false });
    const composer = `only ${taggedMarker(a.number)} left, typed [Image #${b.number}]`;
    expect(await attachments.registry.discardDeleted(composer)).toEqual([b.number]);
    expect((await attachments.registry.list()).map((i) => i.number)).toEqual([a.number, tool.number]);
    await attachments.registry.markSent([a.number]);
    expect(await attachments.registry.discardDeleted('')).toEqual([]);
    expect(mediaFiles(home)).toContain(b.hash);
  });

  it('IMG-10 IMG-12 session records hold number, MIME type and hash of referenced, sent images only, never bytes', async () => {
    const { attachments } = service();
    const one = await attachments.attach(await makeImage('png', 6, 6), { name: 'one.png', draft: false });
    await attachments.attach(await makeImage('jpeg', 6, 6), { draft: false });
    const draft = await attachments.attach(await makeImage('webp', 6, 6));
    const records = await attachments.registry.toRecords([one.number, draft.number]);
    expect(records).toEqual([{ number: 1, mimeType: 'image/png', contentHash: one.hash, name: 'one.png' }]);
    expect(JSON.stringify(records)).not.toContain('data');
  });

  it('IMG-14 inline data in a session file is validated and moved into the media store at load; later saves write the hash only', async () => {
    const home = tempHome();
    const store = MediaStore.forHome(home, DEFAULT_IMAGE_LIMITS);
    const bytes = await makeImage('png', 14, 14, { noise: true });
    const restored = await restoreSessionImages([{ number: 2, mimeType: 'image/png', data: bytes.toString('base64') }], store);
    expect(restored.notes).toEqual([]);
    expect(mediaFiles(home)).toEqual([sha256(bytes)]);
    expect(await restored.registry.toRecords([2])).toEqual([{ number: 2, mimeType: 'image/png', contentHash: sha256(bytes) }]);
    expect(restored.registry.nextNumber).toBe(3);
  });

  it('IMG-13 at resume a missing, truncated or modified media file is skipped with one note; the references are kept; restoring the file repairs', async () => {
    const home = tempHome();
    const store = MediaStore.forHome(home, DEFAULT_IMAGE_LIMITS);
    const images = [
      await makeImage('png', 20, 20, { noise: true }),
      await makeImage('jpeg', 20, 20, { noise: true }),
      await makeImage('webp', 20, 20, { noise: true }),
      await makeImage('png', 20, 20, { colour: '#00ff00' }),
    ];
    const saved = [];
    for (const image of images) saved.push(await store.save(image));
    const records = saved.map((s, i) => ({ number: i + 1, mimeType: s.mime, contentHash: s.hash }));
    rmSync(join(home, 'media', saved[1]!.hash));
    truncateSync(join(home, 'media', saved[2]!.hash), Math.floor(images[2]!.length * 0.55));
    writeFileSync(join(home, 'media', saved[3]!.hash), images[0]!);

    const restored = await restoreSessionImages(records, store, { alsoReferenced: [7] });
    expect(restored.unavailable).toEqual([2, 3, 4]);
    expect(restored.notes).toHaveLength(1);
    expect(restored.notes[0]).toMatch(
      /^3 saved images are unavailable and left out of model requests: \[Image #2\]: media file .* is missing; \[Image #3\]: media file .* is truncated .*; \[Image #4\]: media file .* was modified/,
    );
    expect(restored.notes[0]).toContain('restoring the files repairs the session');
    expect(await restored.registry.toRecords([1, 2, 3, 4])).toEqual(records);
    expect(restored.registry.nextNumber).toBe(8);

    const attachments = new AttachmentService({ store, registry: restored.registry });
    const request = await attachments.imagesForRequest([1, 2, 3, 4], 'anthropic');
    expect([...request.images.keys()]).toEqual([1]);
    expect(request.unavailable.map((u) => u.number)).toEqual([2, 3, 4]);
    expect(projectMessage(`${taggedMarker(1)} ${taggedMarker(2)} text`, request.images).map((p) => p.type)).toEqual([
      'text',
      'image',
      'text',
    ]);

    writeFileSync(join(home, 'media', saved[1]!.hash), images[1]!);
    writeFileSync(join(home, 'media', saved[2]!.hash), images[2]!);
    writeFileSync(join(home, 'media', saved[3]!.hash), images[3]!);
    const repaired = await restoreSessionImages(records, store);
    expect(repaired.notes).toEqual([]);
    expect(repaired.unavailable).toEqual([]);
  });

  it('IMG-15 a JSON export inlines the available bytes as data and keeps the metadata of an unavailable file', async () => {
    const home = tempHome();
    const store = MediaStore.forHome(home, DEFAULT_IMAGE_LIMITS);
    const a = await makeImage('png', 9, 9);
    const b = await makeImage('jpeg', 9, 9);
    const [sa, sb] = [await store.save(a), await store.save(b)];
    rmSync(join(home, 'media', sb.hash));
    const records = [
      { number: 1, mimeType: 'image/png', contentHash: sa.hash },
      { number: 2, mimeType: 'image/jpeg', contentHash: sb.hash },
      { number: 3, mimeType: 'image/png', uri: 'https://example.com/x.png' },
    ];
    const exported = await exportSessionImages(records, store);
    expect(exported.records).toEqual([
      { number: 1, mimeType: 'image/png', contentHash: sa.hash, data: a.toString('base64') },
      { number: 2, mimeType: 'image/jpeg', contentHash: sb.hash },
      { number: 3, mimeType: 'image/png', uri: 'https://example.com/x.png' },
    ]);
    expect(exported.withoutBytes).toEqual([2]);
    // The export loads into an empty Home with its bytes (IMG-14 round trip).
    const elsewhere = tempHome();
    const loaded = await restoreSessionImages(exported.records, MediaStore.forHome(elsewhere, DEFAULT_IMAGE_LIMITS));
    expect(mediaFiles(elsewhere)).toEqual([sa.hash]);
    expect(loaded.unavailable).toEqual([2]);
  });

  it('IMG-17 an image by absolute URI is attached without storage and projects as its URI; other URIs are refused', async () => {
    const { home, attachments } = service();
    const image = await attachments.attachUri('https://example.com/cat.png', { mime: 'image/png', draft: false });
    const request = await attachments.imagesForRequest([image.number], 'openai');
    expect(request.images.get(image.number)).toEqual({ mime: 'image/png', uri: 'https://example.com/cat.png' });
    expect(mediaFiles(home)).toEqual([]);
    expect((await refusal(attachments.attachUri('file:///etc/passwd', { mime: 'image/png' }))).kind).toBe('unsupported_type');
    expect((await refusal(attachments.attachUri(`https://e.com/${'x'.repeat(8200)}`, { mime: 'image/png' }))).kind).toBe(
      'unsupported_type',
    );
  });

  it('IMG-1 a request gets typed bytes + MIME for each tagged marker, fitted to the provider, from the stored file', async () => {
    const { attachments } = service();
    const big = await makeImage('png', 2400, 600, { noise: true });
    const small = await makeImage('jpeg', 50, 40);
    const [a, b] = await attachments.attachBatch([{ bytes: big }, { bytes: small, name: 'small.jpg' }]);
    const text = tagAttachedSpans('[Image #1] vs [Image #2]', [
      { start: 0, number: a!.number },
      { start: 14, number: b!.number },
    ]);
    const { images, unavailable } = await attachments.imagesForRequest([a!.number, b!.number], 'anthropic');
    expect(unavailable).toEqual([]);
    const parts = projectMessage(text, images);
    expect(parts.map((p) => p.type)).toEqual(['text', 'image', 'text', 'image']);
    const second = parts[3];
    expect(second).toEqual({
      type: 'image',
      mime: 'image/jpeg',
      data: small.toString('base64'),
      attachmentId: b!.hash,
      name: 'small.jpg',
    });
    const first = parts[1];
    expect(first?.type === 'image' && first.attachmentId).toBe(a!.hash);
    expect(first?.type === 'image' && Buffer.from(first.data ?? '', 'base64').length).toBeLessThan(big.length);
  });
});
