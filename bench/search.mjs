/**
 * Figures: `grep` and `glob` over a generated tree of 50,000 files, through the built-in walker
 * and through the ripgrep path, each as a ratio to `rg` itself run in the same benchmark
 * (goal: ripgrep path within 1.3x of rg, walker within 5x).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { printFigure, runCount } from './lib/harness.mjs';

const engine = await import(new URL('../packages/engine/dist/index.js', import.meta.url).href);
const FILES = Number(process.env.SEARCH_FILES ?? 50_000);
const runs = runCount(5);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rg = spawnSync('sh', ['-c', 'command -v rg']).stdout.toString().trim();
if (!rg) throw new Error('bench/search.mjs needs ripgrep on PATH (Debian package ripgrep; .ci/run installs it).');

const root = mkdtempSync(join(tmpdir(), 'crystal-bench-search-'));
try {
  execFileSync('git', ['init', '-q'], { cwd: root });
  writeFileSync(join(root, '.gitignore'), 'ignored/\n');
  for (let d = 0; d < FILES / 100; d++) {
    const dir = join(root, `pkg${d % 50}`, `mod${d}`);
    mkdirSync(dir, { recursive: true });
    for (let f = 0; f < 100; f++) {
      const n = d * 100 + f;
      const body = n % 997 === 0 ? `export const needle_${n} = ${n};\n` : `export const value${n} = ${n};\n// filler line\n`;
      writeFileSync(join(dir, `file${f}.${f % 3 === 0 ? 'ts' : 'js'}`), body);
    }
  }
  const todos = new engine.TodoStore();
  const host = (rgPath) => ({ workspace: root, bashTimeoutMs: null, todos, rgPath });
  const call = async (tool, input) => {
    const out = await tool.execute(input, { signal: new AbortController().signal, callId: 'bench' });
    return typeof out === 'string' ? out : out.map((p) => p.text ?? '').join('');
  };
  const time = async (fn) => {
    const t = performance.now();
    await fn();
    return performance.now() - t;
  };
  const rgRun = (args) => () => execFileSync(rg, args, { cwd: root, maxBuffer: 64 * 1024 * 1024 });
  const cases = [
    {
      name: 'grep needle_ across the tree',
      rg: rgRun(['--no-heading', '-n', '--sort', 'path', 'needle_', '.']),
      tool: (rgPath) => () => call(engine.grepTool(host(rgPath)), { pattern: 'needle_' }),
    },
    {
      name: 'glob **/*.ts',
      rg: rgRun(['--files', '--sort', 'path', '-g', '*.ts']),
      tool: (rgPath) => () => call(engine.globTool(host(rgPath)), { pattern: '**/*.ts' }),
    },
  ];
  for (const c of cases) {
    // Same answers both ways before timing anything.
    const viaRg = await c.tool(rg)();
    const viaWalker = await c.tool(null)();
    if (viaRg !== viaWalker) throw new Error(`${c.name}: the ripgrep path and the walker disagree`);
    await time(c.rg);
    const base = [];
    const rgPath = [];
    const walker = [];
    for (let i = 0; i < runs; i++) {
      base.push(await time(c.rg));
      rgPath.push(await time(c.tool(rg)));
      walker.push(await time(c.tool(null)));
    }
    const b = median(base);
    printFigure({
      figure: `search: ${c.name} (${FILES} files), ripgrep path vs rg`,
      subject_ms: Number(median(rgPath).toFixed(1)),
      baseline_ms: Number(b.toFixed(1)),
      ratio: Number((median(rgPath) / b).toFixed(2)),
      goal: 1.3,
      met: median(rgPath) / b <= 1.3,
      runs,
    });
    printFigure({
      figure: `search: ${c.name} (${FILES} files), built-in walker vs rg`,
      subject_ms: Number(median(walker).toFixed(1)),
      baseline_ms: Number(b.toFixed(1)),
      ratio: Number((median(walker) / b).toFixed(2)),
      goal: 5,
      met: median(walker) / b <= 5,
      runs,
    });
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
