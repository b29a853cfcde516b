/**
 * SETUP-1: `crystal` installs on PATH from a packed tarball and from a checkout, offline. The
 * tarball is `npm pack` of packages/cli (bin + bundle, sharp as its one dependency); sharp and
 * its platform packages are packed from this checkout's node_modules and installed next to it
 * with an empty npm cache and --offline, so no registry is involved. The installed binary then
 * logs in (stdin), lists models and runs a turn against the fake provider.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { FakeProvider, repoRoot, tempDir, tempHome } from '@crystal/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { PtySession } from './pty-harness.js';

const run = promisify(execFile);
let fake: FakeProvider | undefined;
afterAll(async () => {
  await fake?.close();
});

function npm(args: string[], cwd = repoRoot) {
  const env = { ...process.env };
  // `npm test` exports its own npm_config_*; the install must not inherit a prefix or cache.
  for (const key of Object.keys(env)) if (key.toLowerCase().startsWith('npm_config_')) delete env[key];
  return run('npm', args, { cwd, env, maxBuffer: 16 * 1024 * 1024 });
}

/** sharp and the dependencies of it that this machine has installed (its platform's binaries). */
function sharpClosure(): string[] {
  const seen = new Set<string>();
  const visit = (name: string): void => {
    const dir = join(repoRoot, 'node_modules', name);
    if (seen.has(name) || !existsSync(join(dir, 'package.json'))) return;
    seen.add(name);
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    for (const dep of [...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.optionalDependencies ?? {})]) visit(dep);
  };
  visit('sharp');
  return [...seen].map((name) => join(repoRoot, 'node_modules', name));
}

function crystal(bin: string, args: string[], home: string, input?: string) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = execFile(
      bin,
      args,
      { env: { PATH: `${join(bin, '..')}:${process.env.PATH}`, HOME: home, CRYSTAL_HOME: home }, cwd: tempDir('crystal-ws-') },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== 'number') reject(error);
        else resolve({ code: error ? (error.code as number) : 0, stdout, stderr });
      },
    );
    child.stdin?.end(input ?? '');
  });
}

describe('install (SETUP-1)', () => {
  it('SETUP-1 npm pack holds bin and bundle, no tests or sources, sharp as the one dependency; it installs offline and works', async () => {
    const out = tempDir('crystal-pack-');
    const { stdout } = await npm(['pack', '-w', 'packages/cli', '--ignore-scripts', '--json', '--pack-destination', out]);
    const [packed] = JSON.parse(stdout) as [{ filename: string; files: { path: string }[] }];
    const files = packed.files.map((f) => f.path);
    expect(files).toContain('bin/crystal.js');
    expect(files).toContain('dist/crystal.cjs');
    expect(files).toContain('dist/launch.cjs');
    // Issue 22: the terminal session starts from its own bundle, and the third-party code `crystal
    // run` never runs is in chunks next to the main bundle.
    expect(files).toContain('dist/terminal.cjs');
    for (const chunk of ['zod.cjs', 'mcp-sdk.cjs', 'web.cjs', 'tools-vendor.cjs', 'interactive.cjs', 'commands.cjs'])
      expect(files).toContain(`dist/${chunk}`);
    expect(files).toContain('dist/app/index.html');
    expect(files.filter((f) => /(^|\/)(test|src)\/|\.test\.|\.map$|tsconfig/.test(f))).toEqual([]);
    const manifest = JSON.parse(readFileSync(join(repoRoot, 'packages/cli/package.json'), 'utf8'));
    expect(manifest.private).toBeUndefined();
    expect(Object.keys(manifest.dependencies)).toEqual(['sharp']);

    // Offline: sharp's closure packed from node_modules, an empty cache, --offline.
    for (const dir of sharpClosure()) await npm(['pack', '--ignore-scripts', '--pack-destination', out, dir]);
    const prefix = tempDir('crystal-prefix-');
    const tarballs = readdirSync(out)
      .filter((f) => f.endsWith('.tgz'))
      .map((f) => join(out, f));
    await npm(
      [
        'install',
        '-g',
        '--prefix',
        prefix,
        '--offline',
        '--cache',
        join(out, 'empty-cache'),
        '--no-audit',
        '--no-fund',
        ...tarballs,
      ],
      out,
    );
    const bin = join(prefix, 'bin', 'crystal');
    expect(statSync(bin).isFile()).toBe(true);
    const home = tempHome();
    const version = await crystal(bin, ['--version'], home.path);
    expect(version.stdout).toMatch(/^Crystal Code 0\.1\.0\n/);
    // The installed copy resolves sharp from its own prefix, not from this checkout.
    const sharp = await run(process.execPath, ['-e', 'import("sharp").then(m => console.log(typeof m.default))'], {
      cwd: join(prefix, 'lib', 'node_modules', '@crystal', 'cli'),
    });
    expect(sharp.stdout.trim()).toBe('function');

    fake = await FakeProvider.start({
      replies: [
        { text: 'installed and running' },
        { toolCalls: [{ id: 'w', name: 'write', arguments: { path: 'notes.md', contents: 'from the install\n' } }] },
        { text: 'wrote it' },
      ],
      requireKey: 'sk-installed',
    });
    home.writeConfig({
      provider: 'fake',
      model: 'fake-model',
      providers: { fake: { protocol: 'openai', baseUri: fake.baseUri, models: { 'fake-model': { contextWindow: 128000 } } } },
      workspaceTrust: false,
    });
    const login = await crystal(bin, ['login'], home.path, 'sk-installed\n');
    expect(login.stderr).toBe('');
    expect(login.stdout).toContain('Stored the key for fake');
    const models = await crystal(bin, ['models'], home.path);
    expect(models.stdout).toMatch(/^\* fake-model/m);
    expect(models.stdout).toMatch(/^ {2}fake-large/m);
    const turn = await crystal(bin, ['run', 'hi'], home.path);
    expect(turn.code).toBe(0);
    expect(turn.stdout).toContain('installed and running');
    expect(fake.requests.at(-1)?.headers.authorization).toBe('Bearer sk-installed');
    // A write shows its diff, from the packed tools' chunk (dist/tools-vendor.cjs).
    const write = await crystal(bin, ['run', '--approval', 'full', 'write it'], home.path);
    expect(write.stderr).toBe('');
    expect(write.stdout).toContain('wrote it');
    expect(JSON.stringify(fake.requests.at(-1)?.body)).toMatch(/Created notes\.md[^"]*\\n[^"]*\+from the install/);

    // Issue 22: on a terminal the installed copy paints from its terminal bundle and takes keys.
    const session = PtySession.start({ bin, home: home.path });
    try {
      await session.waitFor('Type a message');
      await session.type('typed in the installed copy');
      await session.waitFor('Work › typed in the installed copy');
      await session.waitFor('CTX 0%');
    } finally {
      session.kill();
      await session.exited;
    }
  }, 240_000);

  it('SETUP-1 npm install -g . from the checkout puts crystal on PATH', async () => {
    const prefix = tempDir('crystal-prefix-');
    await npm(
      ['install', '-g', '--prefix', prefix, '--offline', '--ignore-scripts', '--no-audit', '--no-fund', repoRoot],
      tempDir(),
    );
    const version = await crystal(join(prefix, 'bin', 'crystal'), ['--version'], tempDir());
    expect(version.stdout).toMatch(/^Crystal Code 0\.1\.0\n/);
  }, 240_000);
});
