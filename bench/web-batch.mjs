/**
 * Figures for the Web host's image batches (issue 9):
 *
 * 1. `web_batch_submit_to_stored`: a batch of 10 x 2 MiB PNG images, from the client's submit
 *    (POST /api/send to the real `crystal web` binary) to the host's answer, which it sends
 *    once every image is validated and stored; against the attachment service called directly
 *    (`attachBatch`, in this process) on other images of the same size, in the same run.
 *    Goal: ratio under 1.5 (the host's own overhead: HTTP, framing, copying).
 * 2. `web_batch_peak_memory`: the host process's peak resident memory while it takes a batch of
 *    the maximum size (images.maxBatchBytes, 50 MiB by default, as 20 x 2.5 MiB), above its
 *    resident memory just before (Linux: VmHWM is reset through /proc/PID/clear_refs, then read
 *    from /proc/PID/status). Goal: under 3x the aggregate limit.
 *
 * The host is kept busy with a slow text turn first, so each batch message waits in the queue
 * and no model request (image preparation for the provider) mixes into the figures. Every
 * sample uses fresh images (content-addressed storage would skip known bytes).
 */
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { printFigure, runCount } from './lib/harness.mjs';

const root = new URL('..', import.meta.url).pathname;
const { AttachmentService, MediaStore, imageLimitsFrom, MIB } = await import(`${root}packages/engine/dist/index.js`);
const { FakeProvider } = await import(`${root}packages/testkit/dist/index.js`);
const sharp = (await import('sharp')).default;

const IMAGE_BYTES = 2 * MIB;
const BATCH = 10;
const runs = runCount(8);
const warmup = 2;

let seed = 1;
/** A PNG of random pixels, stored without compression: about `bytes` long, never the same twice. */
async function noisePng(bytes) {
  const side = Math.floor(Math.sqrt(bytes / 3.01));
  const raw = Buffer.allocUnsafe(side * side * 3);
  let x = (seed++ * 2654435761) >>> 0 || 1;
  for (let i = 0; i < raw.length; i += 4) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    raw.writeUInt32LE(x >>> 0, Math.min(i, raw.length - 4));
  }
  return sharp(raw, { raw: { width: side, height: side, channels: 3 } })
    .png({ compressionLevel: 0 })
    .toBuffer();
}

async function batch(count, bytes) {
  const images = [];
  for (let i = 0; i < count; i++) images.push(await noisePng(bytes));
  return images;
}

function frame(scope, text, images) {
  const manifest = Buffer.from(
    JSON.stringify({
      scope,
      input: {
        kind: 'message',
        text,
        images: images.map((b, i) => ({ name: `bench-${i + 1}.png`, type: 'image/png', size: b.length })),
      },
    }),
  );
  const head = Buffer.alloc(8);
  head.write('CRB1', 0, 'latin1');
  head.writeUInt32BE(manifest.length, 4);
  return Buffer.concat([head, manifest, ...images]);
}

/** Starts `crystal web` on a fresh Home whose model takes images and streams very slowly. */
async function startHost(fake) {
  const home = mkdtempSync(join(tmpdir(), 'crystal-bench-web-'));
  writeFileSync(
    join(home, 'config.json'),
    JSON.stringify({
      provider: 'fake',
      model: 'fake-model',
      retry: { maxRetries: 0 },
      // A fresh temp folder as the workspace: no trust question (it has its own tests).
      workspaceTrust: false,
      providers: {
        fake: {
          protocol: 'openai',
          baseUri: fake.baseUri,
          apiKey: 'bench',
          models: { 'fake-model': { contextWindow: 1000000, imageInput: true } },
        },
      },
    }),
  );
  const child = spawn(process.execPath, [`${root}packages/cli/bin/crystal.js`, 'web', '--home', home], {
    cwd: home,
    env: { PATH: process.env.PATH, HOME: home },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (d) => (err += d));
  const url = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d) => {
      out += d;
      const m = /(http:\/\/\S+\/\?token=\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.on('close', (code) => reject(new Error(`crystal web exited ${code}: ${err}`)));
  });
  const parsed = new URL(url);
  const token = parsed.searchParams.get('token');
  const headers = { authorization: `Bearer ${token}` };
  const api = (path, init = {}) => fetch(`${parsed.origin}${path}`, { ...init, headers: { ...headers, ...init.headers } });
  const state = await (await api('/api/state')).json();
  // A plain HTTP client (as a browser sends a Blob): one request, the body written at once.
  const send = (body) =>
    new Promise((resolve, reject) => {
      const req = request(
        `${parsed.origin}/api/send`,
        {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/x-crystal-input', 'content-length': String(body.length) },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (d) => (text += d));
          res.on('end', () => {
            const answer = JSON.parse(text);
            if (res.statusCode === 200) resolve(answer);
            else reject(new Error(`POST /api/send answered ${res.statusCode}: ${answer.error}`));
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  // A slow text turn: the batches below wait in the queue behind it.
  await send(frame(state.scope, 'keep busy', []));
  for (let i = 0; i < 200; i++) {
    const now = await (await api('/api/state')).json();
    if (now.activity !== 'idle') break;
    await new Promise((r) => setTimeout(r, 10));
  }
  return {
    child,
    home,
    scope: state.scope,
    send,
    stop: async () => {
      child.kill('SIGKILL');
      await new Promise((r) => (child.exitCode === null ? child.on('close', r) : r()));
      rmSync(home, { recursive: true, force: true });
    },
  };
}

function procStatus(pid) {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text)?.[1]);
  return { rssKiB: kib('VmRSS'), hwmKiB: kib('VmHWM') };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};
const round = (n, d = 1) => Math.round(n * 10 ** d) / 10 ** d;

const fake = await FakeProvider.start({ wire: 'openai', replies: [{ textTokens: 20_000, delayMs: 50 }] });
const baselineHome = mkdtempSync(join(tmpdir(), 'crystal-bench-attach-'));
const limits = imageLimitsFrom(undefined);
const service = new AttachmentService({ store: new MediaStore(join(baselineHome, 'media'), limits) });
let host;
try {
  // 1. Submit to stored, host vs the attachment service.
  host = await startHost(fake);
  const samples = { subject: [], baseline: [] };
  for (let i = 0; i < warmup + runs; i++) {
    const order = i % 2 === 0 ? ['baseline', 'subject'] : ['subject', 'baseline'];
    for (const side of order) {
      const images = await batch(BATCH, IMAGE_BYTES);
      let ms;
      if (side === 'subject') {
        const body = frame(host.scope, `batch ${i}`, images);
        const t = performance.now();
        const answer = await host.send(body);
        ms = performance.now() - t;
        if (answer.images.length !== BATCH) throw new Error(`the host stored ${answer.images.length} images, not ${BATCH}`);
      } else {
        const items = images.map((bytes, n) => ({ bytes, name: `bench-${n + 1}.png`, declaredMime: 'image/png' }));
        const t = performance.now();
        const attached = await service.attachBatch(items);
        ms = performance.now() - t;
        if (attached.length !== BATCH) throw new Error(`attachBatch stored ${attached.length} images, not ${BATCH}`);
      }
      if (i >= warmup) samples[side].push(ms);
    }
  }
  await host.stop();
  host = undefined;
  const subject = median(samples.subject);
  const baseline = median(samples.baseline);
  printFigure({
    figure: 'web_batch_submit_to_stored',
    batch: `${BATCH} x ${IMAGE_BYTES / MIB} MiB`,
    subject_ms: round(subject),
    baseline_ms: round(baseline),
    ratio: round(subject / baseline, 3),
    goal: 1.5,
    met: subject / baseline < 1.5,
    runs,
    subject_min_ms: round(Math.min(...samples.subject)),
    subject_max_ms: round(Math.max(...samples.subject)),
    baseline_min_ms: round(Math.min(...samples.baseline)),
    baseline_max_ms: round(Math.max(...samples.baseline)),
  });

  // 2. Peak host memory for a batch of the maximum size.
  host = await startHost(fake);
  await host.send(frame(host.scope, 'warm up', await batch(2, IMAGE_BYTES)));
  const count = limits.maxImagesPerMessage;
  const each = Math.floor(limits.maxBatchBytes / count);
  const images = await batch(count, each - 4096);
  const total = images.reduce((sum, b) => sum + b.length, 0);
  if (total > limits.maxBatchBytes) throw new Error(`the batch takes ${total} bytes, over the limit ${limits.maxBatchBytes}`);
  const body = frame(host.scope, 'largest batch', images);
  images.length = 0;
  const before = procStatus(host.child.pid);
  let reset = true;
  try {
    writeFileSync(`/proc/${host.child.pid}/clear_refs`, '5');
  } catch {
    reset = false;
  }
  const answer = await host.send(body);
  if (answer.images.length !== count) throw new Error(`the host stored ${answer.images.length} images, not ${count}`);
  const after = procStatus(host.child.pid);
  const peakMiB = (after.hwmKiB - before.rssKiB) / 1024;
  const limitMiB = limits.maxBatchBytes / MIB;
  printFigure({
    figure: 'web_batch_peak_memory',
    batch: `${count} images, ${round(total / MIB)} MiB`,
    peak_above_idle_mb: round(peakMiB),
    ratio_to_limit: round(peakMiB / limitMiB, 2),
    goal: 3,
    met: peakMiB / limitMiB < 3,
    host_rss_before_mb: round(before.rssKiB / 1024),
    host_peak_rss_mb: round(after.hwmKiB / 1024),
    peak_reset: reset,
  });
} finally {
  await host?.stop();
  await fake.close();
  rmSync(baselineHome, { recursive: true, force: true });
}
