/**
 * Figure (TUIX-5): `@` completion on a generated 50,000-file workspace (a .gitignore'd folder
 * included) against `rg --files` listing the same tree, run in the same benchmark: the cold
 * completion (list through the ripgrep path with the walker's rules, then rank) and the warm
 * one (the listing reused). Goal: cold within 1.5x of `rg --files`.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { printFigure, runCount } from './lib/harness.mjs';

const engine = await import(new URL('../packages/engine/dist/index.js', import.meta.url).href);
const FILES = Number(process.env.MENTION_FILES ?? 50_000);
const runs = runCount(5);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rg = spawnSync('sh', ['-c', 'command -v rg']).stdout.toString().trim();
if (!rg) throw new Error('bench/mention-complete.mjs needs ripgrep on PATH (Debian package ripgrep; .ci/run installs it).');

const root = mkdtempSync(join(tmpdir(), 'crystal-bench-mention-'));
try {
  execFileSync('git', ['init', '-q'], { cwd: root });
  writeFileSync(join(root, '.gitignore'), 'ignored/\n');
  for (let d = 0; d < FILES / 100; d++) {
    const dir = join(root, `pkg${d % 50}`, `mod${d}`);
    mkdirSync(dir, { recursive: true });
    for (let f = 0; f < 100; f++) writeFileSync(join(dir, `file${f}.${f % 3 === 0 ? 'ts' : 'js'}`), '');
  }
  mkdirSync(join(root, 'ignored'));
  for (let f = 0; f < 100; f++) writeFileSync(join(root, 'ignored', `file${f}.ts`), '');
  const query = 'mod123file7';
  const time = async (fn) => {
    const t = performance.now();
    await fn();
    return performance.now() - t;
  };
  const rgFiles = () => execFileSync(rg, ['--files', '.'], { cwd: root, maxBuffer: 64 * 1024 * 1024 });
  const cold = () => new engine.WorkspaceFileIndex(() => root, rg).complete(query);
  const warmIndex = new engine.WorkspaceFileIndex(() => root, rg);
  const first = await warmIndex.complete(query);
  if (first[0] !== 'pkg23/mod123/file7.js' || first.some((p) => p.startsWith('ignored/')))
    throw new Error(`unexpected completion: ${first.slice(0, 3).join(', ')}`);
  await time(rgFiles);
  await time(cold);
  const base = [];
  const coldMs = [];
  const warmMs = [];
  for (let i = 0; i < runs; i++) {
    base.push(await time(rgFiles));
    coldMs.push(await time(cold));
    warmMs.push(await time(() => warmIndex.complete(query)));
  }
  const b = median(base);
  printFigure({
    figure: `@ completion, cold (${FILES} files) vs rg --files`,
    subject_ms: Number(median(coldMs).toFixed(1)),
    baseline_ms: Number(b.toFixed(1)),
    ratio: Number((median(coldMs) / b).toFixed(2)),
    goal: 1.5,
    met: median(coldMs) / b <= 1.5,
    runs,
  });
  printFigure({
    figure: `@ completion, warm listing (${FILES} files) vs rg --files`,
    subject_ms: Number(median(warmMs).toFixed(1)),
    baseline_ms: Number(b.toFixed(1)),
    ratio: Number((median(warmMs) / b).toFixed(2)),
    goal: 1.5,
    met: median(warmMs) / b <= 1.5,
    runs,
  });
} finally {
  rmSync(root, { recursive: true, force: true });
}
