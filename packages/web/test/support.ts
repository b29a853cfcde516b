/**
 * Test support for the Web surface: the real `crystal web` binary on a temp Home, a fresh
 * headless Debian Chromium driven by playwright-core, raw HTTP requests (for headers fetch
 * will not send), and images made with sharp.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crystalBin, type FakeProvider, fakeConfig } from '@crystal/testkit';
import { type BrowserContext, chromium } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

export interface WebProcess {
  readonly url: string;
  readonly origin: string;
  readonly token: string;
  readonly port: number;
  readonly child: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  /** SIGINT, then the exit code. */
  stop(): Promise<number | null>;
}

/** Starts `crystal web` and waits for the printed URL. */
export function startCrystalWeb(options: {
  readonly home: string;
  readonly workspace: string;
  readonly args?: readonly string[];
}): Promise<WebProcess> {
  const env: Record<string, string> = {};
  for (const key of ['PATH', 'LANG', 'TERM']) if (process.env[key]) env[key] = process.env[key] as string;
  env.HOME = options.home;
  env.CRYSTAL_HOME = options.home;
  const child = spawn(process.execPath, [crystalBin, 'web', ...(options.args ?? [])], {
    cwd: options.workspace,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const onData = (): void => {
      const match = /(http:\/\/\S+\/\?token=(\S+))/.exec(out);
      if (!match) return;
      child.stdout.off('data', onData);
      const url = match[1] as string;
      const parsed = new URL(url);
      resolve({
        url,
        origin: parsed.origin,
        token: match[2] as string,
        port: Number(parsed.port),
        child,
        stdout: () => out,
        stderr: () => err,
        stop: async () => {
          if (child.exitCode === null) child.kill('SIGINT');
          return exited;
        },
      });
    };
    child.stdout.on('data', onData);
    void exited.then((code) => reject(new Error(`crystal web exited ${code} before printing its URL:\n${err}${out}`)));
  });
}

/** A fresh headless Chromium with its own profile folder. */
export async function launchChromium(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), 'crystal-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** A config whose fake model takes images (`imageInput: true`). */
export function imageConfig(fake: FakeProvider, protocol: 'openai' | 'anthropic', extra: Record<string, unknown> = {}) {
  const config = fakeConfig(fake.baseUriFor(protocol), extra, protocol) as {
    providers: { fake: { models: Record<string, Record<string, unknown>> } };
  };
  config.providers.fake.models['fake-model'] = { contextWindow: 128000, maxTokens: 4096, imageInput: true };
  return config;
}

/** A PNG of one colour. */
export async function png(width: number, height: number, rgb: readonly [number, number, number]): Promise<Buffer> {
  const sharp = (await import('sharp')).default;
  return sharp({ create: { width, height, channels: 3, background: { r: rgb[0], g: rgb[1], b: rgb[2] } } })
    .png()
    .toBuffer();
}

/** A PNG of random pixels (it does not compress): about `bytes` long. */
export async function noisePng(bytes: number, seed = 1): Promise<Buffer> {
  const sharp = (await import('sharp')).default;
  const side = Math.ceil(Math.sqrt(bytes / 3));
  const raw = Buffer.alloc(side * side * 3);
  let x = seed * 2654435761;
  for (let i = 0; i < raw.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    raw[i] = x & 0xff;
  }
  return sharp(raw, { raw: { width: side, height: side, channels: 3 } })
    .png({ compressionLevel: 0 })
    .toBuffer();
}

/** The widths of the images a recorded provider request carries, in order (OpenAI data URLs or Anthropic base64 blocks). */
export async function requestImageWidths(body: unknown): Promise<number[]> {
  const sharp = (await import('sharp')).default;
  const found: Buffer[] = [];
  const walk = (value: unknown): void => {
    if (typeof value === 'string') {
      const m = /^data:image\/[a-z]+;base64,(.*)$/s.exec(value);
      if (m) found.push(Buffer.from(m[1] as string, 'base64'));
      return;
    }
    if (Array.isArray(value)) {
      for (const item of value) walk(item);
      return;
    }
    if (value && typeof value === 'object') {
      const record = value as Record<string, unknown>;
      const source = record.source as { type?: string; data?: string } | undefined;
      if (record.type === 'image' && source?.type === 'base64' && typeof source.data === 'string') {
        found.push(Buffer.from(source.data, 'base64'));
        return;
      }
      for (const item of Object.values(record)) walk(item);
    }
  };
  walk(body);
  const widths: number[] = [];
  for (const bytes of found) widths.push((await sharp(bytes).metadata()).width ?? 0);
  return widths;
}

export function mediaFiles(home: string): string[] {
  const dir = join(home, 'media');
  return existsSync(dir) ? readdirSync(dir).sort() : [];
}

export interface RawResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** One HTTP request with exactly the headers given (fetch would refuse to set Host). */
export function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: Buffer | string } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: options.method ?? 'GET', headers: options.headers ?? {} }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** The body of `POST /api/send` (packages/web/src/input-frame.ts). */
export function inputFrame(scope: string, input: Record<string, unknown>, images: readonly Buffer[] = []): Buffer {
  const manifest = Buffer.from(JSON.stringify({ scope, input }));
  const head = Buffer.alloc(8);
  head.write('CRB1', 0, 'latin1');
  head.writeUInt32BE(manifest.length, 4);
  return Buffer.concat([head, manifest, ...images]);
}

export function tempFolder(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}
