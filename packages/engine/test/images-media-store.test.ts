import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_IMAGE_LIMITS, ImageError, MediaStore } from '../src/images/index.js';
import { cut, limits, makeImage, tempHome } from './images-fixtures.js';

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');
const mode = (path: string): number => statSync(path).mode & 0o777;

describe('media store', () => {
  it('IMG-9 writes <home>/media/<sha256> as 0600 in a 0700 folder', async () => {
    const home = tempHome();
    const store = MediaStore.forHome(home, DEFAULT_IMAGE_LIMITS);
    const bytes = await makeImage('png', 40, 30, { noise: true });
    const saved = await store.save(bytes, { mime: 'image/png' });
    const file = join(home, 'media', sha256(bytes));
    expect(saved.hash).toBe(sha256(bytes));
    expect(saved.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(readFileSync(file).equals(bytes)).toBe(true);
    expect(mode(join(home, 'media'))).toBe(0o700);
    expect(mode(file)).toBe(0o600);
  });

  it('IMG-9 makes an existing, looser media folder owner-only', async () => {
    const home = tempHome();
    mkdirSync(join(home, 'media'), { mode: 0o755 });
    chmodSync(join(home, 'media'), 0o755);
    await MediaStore.forHome(home, DEFAULT_IMAGE_LIMITS).save(await makeImage('jpeg', 20, 20));
    expect(mode(join(home, 'media'))).toBe(0o700);
  });

  it('IMG-10 the store answers the hash and the MIME type only, never the bytes', async () => {
    const store = MediaStore.forHome(tempHome(), DEFAULT_IMAGE_LIMITS);
    const bytes = await makeImage('webp', 24, 24);
    const saved = await store.save(bytes);
    expect(saved).toEqual({ hash: sha256(bytes), mime: 'image/webp' });
  });

  it('IMG-8 the store validates again before it writes: a truncated image, a wrong declared type or an oversize file writes nothing', async () => {
    const home = tempHome();
    const store = MediaStore.forHome(home, limits({ maxImageBytes: 2048 }));
    const png = await makeImage('png', 120, 90, { noise: true });
    const small = await makeImage('png', 8, 8);
    const attempts: [() => Promise<unknown>, string][] = [
      [() => store.save(cut(small, 0.55), { mime: 'image/png' }), 'corrupt'],
      [() => store.save(small, { mime: 'image/jpeg' }), 'mime_mismatch'],
      [() => store.save(png, { mime: 'image/png' }), 'too_large'],
      [() => store.save(Buffer.from('GIF89a but not really'), { mime: 'image/gif' }), 'corrupt'],
    ];
    for (const [attempt, kind] of attempts) {
      const error = await attempt().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ImageError);
      expect((error as ImageError).kind).toBe(kind);
    }
    expect(existsSync(join(home, 'media')) ? readdirSync(join(home, 'media')) : []).toEqual([]);
  });

  it('IMG-11 writes through a temporary file and leaves none behind; saving stored content again rewrites nothing', async () => {
    const home = tempHome();
    const store = MediaStore.forHome(home, DEFAULT_IMAGE_LIMITS);
    const bytes = await makeImage('gif', 30, 30, { noise: true });
    const first = await store.save(bytes);
    const file = join(home, 'media', first.hash);
    const before = statSync(file);
    const second = await new MediaStore(join(home, 'media'), DEFAULT_IMAGE_LIMITS).save(Buffer.from(bytes));
    expect(second).toEqual(first);
    expect(statSync(file).ino).toBe(before.ino);
    expect(readdirSync(join(home, 'media'))).toEqual([first.hash]);
  });

  it('IMG-11 a damaged file under the hash is replaced whole by a new save (repair), atomically', async () => {
    const home = tempHome();
    const store = MediaStore.forHome(home, DEFAULT_IMAGE_LIMITS);
    const bytes = await makeImage('png', 50, 50, { noise: true });
    const { hash } = await store.save(bytes);
    const file = join(home, 'media', hash);
    const damagedIno = statSync(file).ino;
    truncateSync(file, 10);
    chmodSync(file, 0o644);
    await store.save(bytes);
    expect(readFileSync(file).equals(bytes)).toBe(true);
    expect(mode(file)).toBe(0o600);
    expect(statSync(file).ino).not.toBe(damagedIno);
    expect(readdirSync(join(home, 'media'))).toEqual([hash]);
  });

  it('IMG-13 read proves the content: intact, missing, truncated, modified, a link, a wrong recorded type, a bad reference', async () => {
    const home = tempHome();
    const store = MediaStore.forHome(home, DEFAULT_IMAGE_LIMITS);
    const a = await makeImage('png', 64, 48, { noise: true });
    const b = await makeImage('jpeg', 64, 48, { noise: true });
    const other = await makeImage('png', 64, 48, { colour: '#ff0000' });
    const [sa, sb, sc] = [await store.save(a), await store.save(b), await store.save(other)];
    const ok = await store.read(sa.hash, { mime: 'image/png' });
    expect(ok.ok && ok.bytes.equals(a) && ok.mime).toBe('image/png');

    truncateSync(join(home, 'media', sa.hash), Math.floor(a.length * 0.55));
    expect(await store.read(sa.hash)).toMatchObject({ ok: false, problem: 'truncated' });
    writeFileSync(join(home, 'media', sb.hash), other);
    expect(await store.read(sb.hash)).toMatchObject({ ok: false, problem: 'modified' });
    writeFileSync(join(home, 'media', sb.hash), b.subarray(0, b.length - 100));
    expect(await store.read(sb.hash, { bytes: b.length })).toMatchObject({ ok: false, problem: 'truncated' });
    expect(await store.read(sc.hash, { mime: 'image/jpeg' })).toMatchObject({ ok: false, problem: 'mime_mismatch' });
    const missing = await store.read('0'.repeat(64));
    expect(missing).toMatchObject({ ok: false, problem: 'missing' });
    expect(!missing.ok && missing.detail).toBe(`media file ${join(home, 'media', '0'.repeat(64))} is missing.`);
    const target = join(home, 'elsewhere.png');
    writeFileSync(target, a);
    // A hash-shaped name no saved image has (a random image's hash may itself start with 'f').
    const linked = 'f'.repeat(64);
    symlinkSync(target, join(home, 'media', linked));
    expect(await store.read(linked)).toMatchObject({ ok: false, problem: 'not_a_file' });
    expect(await store.read('../../etc/passwd')).toMatchObject({ ok: false, problem: 'invalid_reference' });
    expect(() => store.pathOf('../x')).toThrow(/not a media reference/);

    // Restoring the original bytes repairs the reference.
    writeFileSync(join(home, 'media', sa.hash), a);
    expect(await store.read(sa.hash)).toMatchObject({ ok: true, hash: sa.hash });
  });

  it('IMG-16 the store never deletes media by itself: it has no delete, and earlier files survive later saves and new stores', async () => {
    const home = tempHome();
    const images = await Promise.all([makeImage('png', 10, 10), makeImage('jpeg', 10, 10), makeImage('webp', 10, 10)]);
    const hashes: string[] = [];
    for (const image of images) hashes.push((await MediaStore.forHome(home, DEFAULT_IMAGE_LIMITS).save(image)).hash);
    const methods = Object.getOwnPropertyNames(MediaStore.prototype);
    expect(methods.filter((m) => /delete|remove|prune|gc|collect|clean|unlink/i.test(m))).toEqual([]);
    expect(readdirSync(join(home, 'media')).sort()).toEqual([...hashes].sort());
  });
});
