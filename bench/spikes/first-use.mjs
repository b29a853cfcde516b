/**
 * Spike (issue 22 item 4): calls that cost a start far more the first time than after, each against what `crystal run`
 * does instead. Not part of `npm run bench` (no goal; about half a minute): `node bench/spikes/first-use.mjs` after
 * `npm run build`.
 *
 * Each figure is one fresh Node process per run (a first use happens once per process), node:http loaded first as in
 * `crystal run`, the call timed inside it with process.hrtime; the two sides interleaved, medians printed with their
 * ratio (the replacement over the call it replaces):
 *
 * - `Date.prototype.toISOString`'s first call against core's `isoTime` (the same text from the UTC fields);
 * - twenty optional files that are not there, read with `readFileSync` in a try (a thrown ENOENT each) against the
 *   engine's `readTextIfPresent` (a stat that does not throw);
 * - `require('node:module')` (what createRequire cost every start) against `process.getBuiltinModule` loading
 *   node:fs/promises (what the CLI's lazy built-ins use; node:module is not loaded);
 * - `process.stdout` and `process.stderr` made for a pipe, and one line written, against the line written to
 *   descriptor 1 with fs.writeSync.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { median, printFigure, round, runCount } from '../lib/harness.mjs';

const root = (path) => fileURLToPath(new URL(`../../${path}`, import.meta.url));
const core = JSON.stringify(root('packages/core/dist/iso-time.js'));
const fsErrors = JSON.stringify(root('packages/engine/dist/fs-errors.js'));

/** A script that loads node:http, runs `setup`, times `body` and prints the microseconds on stderr. */
const script = (setup, body) =>
  [
    "require('node:http');",
    setup,
    'const t = process.hrtime.bigint();',
    body,
    "require('node:fs').writeSync(2, 'US ' + Number(process.hrtime.bigint() - t) / 1000 + '\\n');",
  ].join('\n');

const missing = Array.from({ length: 20 }, (_, i) => JSON.stringify(`/tmp/crystal-first-use-missing/${i}.json`));
const CASES = [
  {
    figure: "first-use: isoTime vs Date's toISOString, first call",
    subject: script(`const { isoTime } = require(${core});`, 'isoTime(new Date());'),
    baseline: script('', 'new Date().toISOString();'),
  },
  {
    figure: 'first-use: 20 missing optional files, readTextIfPresent vs readFileSync in a try (ENOENT thrown)',
    subject: script(
      `const { readTextIfPresent } = require(${fsErrors});`,
      `for (const f of [${missing.join(', ')}]) readTextIfPresent(f);`,
    ),
    baseline: script(
      "const { readFileSync } = require('node:fs');",
      `for (const f of [${missing.join(', ')}]) { try { readFileSync(f, 'utf8'); } catch {} }`,
    ),
  },
  {
    figure: "first-use: a built-in through process.getBuiltinModule vs require('node:module') for createRequire",
    subject: script('', "process.getBuiltinModule('node:fs/promises');"),
    baseline: script('', `require('node:module').createRequire(${JSON.stringify(root('package.json'))})('node:fs/promises');`),
  },
  {
    figure: 'first-use: a line to stdout (a pipe) with fs.writeSync(1) vs process.stdout and process.stderr made',
    subject: script('', "require('node:fs').writeSync(1, '{}\\n');"),
    baseline: script('', "process.stderr; process.stdout.write('{}\\n');"),
  },
];

/** One fresh process running `source` (CommonJS, from stdin would load more: -e), its timed microseconds. */
function once(source) {
  const result = spawnSync(process.execPath, ['-e', source], { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  const match = /US ([\d.]+)/.exec(result.stderr);
  if (result.status !== 0 || !match) throw new Error(`a first-use run failed: ${result.stderr}`);
  return Number(match[1]);
}

const runs = runCount(30);
for (const { figure, subject, baseline } of CASES) {
  once(subject);
  once(baseline);
  const a = [];
  const b = [];
  for (let i = 0; i < runs; i++) {
    if (i % 2) {
      a.push(once(subject));
      b.push(once(baseline));
    } else {
      b.push(once(baseline));
      a.push(once(subject));
    }
  }
  const s = median(a);
  const base = median(b);
  printFigure({ figure, subject_us: round(s), baseline_us: round(base), ratio: round(s / base, 3), goal: null, runs });
}
