/**
 * Figures: validate + store through the attachment service of one 20 MiB PNG and of a batch of
 * 10 JPEGs, each as a ratio to the I/O floor of the same bytes measured in the same run
 * (`sha256sum` + `cp` of the files); goal under 3x.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { printFigure, runCount } from './lib/harness.mjs';

const engine = await import(new URL('../packages/engine/dist/index.js', import.meta.url).href);
const { default: sharp } = await import('sharp');
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const runs = runCount(5);
const dir = mkdtempSync(join(tmpdir(), 'crystal-bench-img-'));

/** Random pixels do not compress, so the PNG is about the size asked for. */
async function noisePng(targetBytes) {
  const side = Math.ceil(Math.sqrt(targetBytes / 3));
  return sharp(randomBytes(side * side * 3), { raw: { width: side, height: side, channels: 3 } })
    .png({ compressionLevel: 1 })
    .toBuffer();
}

async function jpegs(count, seed) {
  const out = [];
  for (let i = 0; i < count; i++) {
    out.push(
      await sharp(randomBytes(800 * 600 * 3), { raw: { width: 800, height: 600, channels: 3 } })
        .jpeg({ quality: 80 })
        .toBuffer(),
    );
  }
  return out.map((b) => Buffer.concat([b, Buffer.from([seed])]));
}

/** Distinct bytes for every run: the service remembers images it validated by content hash. */
async function sets(make, count) {
  const out = [];
  for (let i = 0; i < count; i++) out.push(await make(i));
  return out;
}

function floor(files) {
  const start = performance.now();
  const copies = join(dir, `copy-${Math.random().toString(16).slice(2)}`);
  execFileSync('mkdir', ['-p', copies]);
  execFileSync('sha256sum', files, { stdio: 'ignore' });
  execFileSync('cp', [...files, copies]);
  return performance.now() - start;
}

async function service(buffers) {
  const home = mkdtempSync(join(dir, 'home-'));
  const limits = engine.imageLimitsFrom({
    maxImageBytes: 64 * 1024 * 1024,
    maxBatchBytes: 256 * 1024 * 1024,
    maxImagesPerMessage: 20,
  });
  const attachments = new engine.AttachmentService({ store: engine.MediaStore.forHome(home, limits) });
  const start = performance.now();
  await attachments.attachBatch(buffers.map((bytes, i) => ({ bytes, name: `image-${i}` })));
  return performance.now() - start;
}

try {
  const pngs = await sets(async () => [await noisePng(19.5 * 1024 * 1024)], runs + 1);
  const batches = await sets((i) => jpegs(10, i), runs + 1);
  const filesOf = (buffers, tag) =>
    buffers.map((b, i) => {
      const file = join(dir, `${tag}-${i}`);
      writeFileSync(file, b);
      return file;
    });
  for (const [name, inputs] of [
    [`one ${(pngs[0][0].length / 1048576).toFixed(1)} MiB PNG`, pngs],
    ['a batch of 10 JPEGs (800x600, noise)', batches],
  ]) {
    const files = filesOf(inputs[0], name.length);
    await service(inputs[0]);
    floor(files);
    const subject = [];
    const base = [];
    for (let i = 1; i <= runs; i++) {
      base.push(floor(files));
      subject.push(await service(inputs[i]));
    }
    const ratio = median(subject) / median(base);
    printFigure({
      figure: `image-store: validate + store ${name} vs sha256sum + cp`,
      subject_ms: Number(median(subject).toFixed(1)),
      baseline_ms: Number(median(base).toFixed(1)),
      ratio: Number(ratio.toFixed(2)),
      goal: 3,
      met: ratio < 3,
      runs,
    });
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
