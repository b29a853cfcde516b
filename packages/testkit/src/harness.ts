/** Test harness helpers: temporary Home folders and the real `crystal` binary as a child process. */
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
/** The repository root (works from `src/` and from `dist/`). */
export const repoRoot = resolve(here, '../../..');
export const crystalBin = join(repoRoot, 'packages/cli/bin/crystal.js');

export interface TempHome {
  readonly path: string;
  writeConfig(config: unknown): void;
  writeFile(relative: string, content: string | Uint8Array): string;
  dispose(): void;
}

export function tempDir(prefix = 'crystal-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * One compile-cache folder (packages/cli/src/launch.ts) for the starts of the binary in one test
 * file: each test has its own temporary HOME, where the cache would be empty at every start.
 * mkdtemp makes it 0700, as the loader requires. A test may set CRYSTAL_COMPILE_CACHE itself.
 */
let compileCache: string | undefined;
export function testCompileCache(): string {
  compileCache ??= tempDir('crystal-compile-cache-');
  return compileCache;
}

export function tempHome(config?: unknown): TempHome {
  const path = tempDir('crystal-home-');
  const home: TempHome = {
    path,
    writeConfig: (value) => home.writeFile('config.json', typeof value === 'string' ? value : JSON.stringify(value, null, 2)),
    writeFile(relative, content) {
      const file = join(path, relative);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, content);
      return file;
    },
    dispose: () => rmSync(path, { recursive: true, force: true }),
  };
  if (config !== undefined) home.writeConfig(config);
  return home;
}

/** A `config.json` whose provider `fake` points at a fake server. */
export function fakeConfig(baseUri: string, extra: Record<string, unknown> = {}, protocol = 'openai'): Record<string, unknown> {
  return {
    provider: 'fake',
    model: 'fake-model',
    providers: {
      fake: {
        protocol,
        baseUri,
        apiKey: 'test-key',
        models: { 'fake-model': { contextWindow: 128000, maxTokens: 4096 } },
      },
    },
    // Tests run in fresh temporary workspaces; the trust question has its own tests.
    workspaceTrust: false,
    ...extra,
  };
}

export interface RunResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface RunOptions {
  readonly home?: string;
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly input?: string;
  readonly timeoutMs?: number;
}

/** Runs the real `crystal` binary with a clean environment (no provider keys leak in). */
export function runCrystal(args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
  const env: Record<string, string> = {};
  for (const key of ['PATH', 'LANG', 'TERM', 'SYSTEMROOT']) if (process.env[key]) env[key] = process.env[key] as string;
  env.HOME = options.home ?? tempDir('crystal-nohome-');
  if (options.home) env.CRYSTAL_HOME = options.home;
  env.CRYSTAL_COMPILE_CACHE = testCompileCache();
  for (const [key, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [crystalBin, ...args], {
      cwd: options.cwd ?? tempDir('crystal-ws-'),
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal, stdout, stderr });
    });
    if (options.input !== undefined) child.stdin.end(options.input);
    else child.stdin.end();
  });
}
