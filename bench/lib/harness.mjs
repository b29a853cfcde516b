/** Benchmark harness: run a subject command against a baseline command, interleaved, and report wall time and peak RSS. */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const probe = new URL('./rss-probe.cjs', import.meta.url).pathname;

/** Runs from env BENCH_RUNS when set, else the script's default. */
export function runCount(fallback) {
  const n = Number(process.env.BENCH_RUNS);
  return Number.isInteger(n) && n > 0 ? n : fallback;
}

/**
 * Runs `cmd` once: `{ argv, env?, cwd?, input?, check?, prepare? }` (`prepare` runs untimed before the spawn). Resolves `{ ms, rssKiB, stdout, stderr }`.
 * Rejects when the command exits non-zero or `check(stdout, stderr)` throws.
 */
export function runOnce(cmd, rssFile, { scrubbed = false } = {}) {
  const base = scrubbed ? scrubbedEnv() : process.env;
  const nodeOptions = [base.NODE_OPTIONS, `--require "${probe}"`].filter(Boolean).join(' ');
  const env = { ...base, ...cmd.env, NODE_OPTIONS: nodeOptions, BENCH_RSS_FILE: rssFile };
  rmSync(rssFile, { force: true });
  // Untimed set-up of one run (say, restoring a session file the previous run appended to).
  cmd.prepare?.();
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn(cmd.argv[0], cmd.argv.slice(1), {
      env,
      ...(cmd.cwd ? { cwd: cmd.cwd } : {}),
      stdio: [cmd.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    if (cmd.input !== undefined) child.stdin.end(cmd.input);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      if (code !== 0) return reject(new Error(`${cmd.argv.join(' ')} exited ${code ?? signal}\n${stderr}${stdout}`));
      try {
        cmd.check?.(stdout, stderr);
        resolve({ ms, ...readProbe(rssFile), stdout, stderr });
      } catch (error) {
        reject(error);
      }
    });
  });
}

/**
 * What rss-probe.cjs wrote: peak RSS in KiB, the process's own CPU time in ms and its minor page faults (undefined
 * when it wrote nothing).
 */
function readProbe(file) {
  try {
    const [rss, cpu, faults] = readFileSync(file, 'utf8').split(' ').map(Number);
    return { rssKiB: rss, cpuMs: cpu, faults };
  } catch {
    return { rssKiB: undefined, cpuMs: undefined, faults: undefined };
  }
}

/**
 * A clean environment for start-up figures (issue 22 item 3): only PATH, HOME and TMPDIR of the
 * caller, so NODE_EXTRA_CA_CERTS, NODE_OPTIONS and the like (NODE_EXTRA_CA_CERTS alone adds
 * ~28 ms to every Node start) cannot move a figure a user would not see.
 */
export function scrubbedEnv() {
  const env = {};
  for (const key of ['PATH', 'HOME', 'TMPDIR']) if (process.env[key] !== undefined) env[key] = process.env[key];
  return env;
}

/** The caller's variables that change a Node start, for the figure beside the scrubbed one. */
export function inheritedNote() {
  const names = Object.keys(process.env).filter((k) => /^NODE_|^UV_|^OPENSSL_|^SSL_CERT/.test(k));
  return names.length === 0 ? 'none' : names.sort().join(',');
}

/**
 * Runs baseline and subject `runs` times each (after `warmup` discarded pairs), sequentially and interleaved; the order
 * within a pair flips every iteration so drift and noise fall on both sides equally.
 */
export async function compare({ subject, baseline, runs, warmup = 2, scrubbed = false }) {
  const dir = mkdtempSync(join(tmpdir(), 'crystal-bench-'));
  const samples = { subject: [], baseline: [] };
  try {
    for (let i = 0; i < warmup + runs; i++) {
      const order = i % 2 === 0 ? ['baseline', 'subject'] : ['subject', 'baseline'];
      for (const side of order) {
        const result = await runOnce(side === 'subject' ? subject : baseline, join(dir, `${side}.rss`), { scrubbed });
        if (i >= warmup) samples[side].push(result);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    runs,
    subject: summarize(samples.subject),
    baseline: summarize(samples.baseline),
    samples,
  };
}

function summarize(samples) {
  const ms = samples.map((s) => s.ms);
  const rss = samples.map((s) => s.rssKiB).filter((k) => k !== undefined);
  const cpu = samples.map((s) => s.cpuMs).filter((c) => c !== undefined && Number.isFinite(c));
  const faults = samples.map((s) => s.faults).filter((f) => f !== undefined && Number.isFinite(f));
  return {
    median: median(ms),
    cpuMedian: cpu.length === samples.length ? median(cpu) : undefined,
    faultsMedian: faults.length === samples.length ? median(faults) : undefined,
    min: Math.min(...ms),
    max: Math.max(...ms),
    peakRssKiB: rss.length ? Math.max(...rss) : undefined,
  };
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export const round = (n, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

/**
 * A 95% interval of the subject/baseline ratio of medians, by a paired bootstrap over interleaved runs: run i of both
 * sides is drawn together, so a drift of the machine's speed between runs (which moves both sides of one pair) does
 * not widen it, while the noise within a pair does. The generator is seeded: the same samples give the same interval.
 * A ratio read once near its goal (1.16 against 1.2, say) is only under it when the interval's upper end is.
 */
export function ratioInterval(subjectMs, baselineMs, { resamples = 2000, seed = 1 } = {}) {
  const n = subjectMs.length;
  if (n === 0 || n !== baselineMs.length) throw new Error(`ratioInterval needs paired runs (${n} and ${baselineMs.length})`);
  const random = mulberry32(seed);
  const ratios = new Float64Array(resamples);
  const subject = new Float64Array(n);
  const baseline = new Float64Array(n);
  for (let b = 0; b < resamples; b++) {
    for (let i = 0; i < n; i++) {
      const pick = Math.floor(random() * n);
      subject[i] = subjectMs[pick];
      baseline[i] = baselineMs[pick];
    }
    ratios[b] = median(subject) / median(baseline);
  }
  ratios.sort();
  return [ratios[Math.floor(0.025 * (resamples - 1))], ratios[Math.ceil(0.975 * (resamples - 1))]];
}

/** A small seeded generator (mulberry32): uniform in [0, 1). */
function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Prints one JSON line. */
export function printFigure(figure) {
  process.stdout.write(`${JSON.stringify(figure)}\n`);
}

/**
 * The timing figure of a `compare` result: subject/baseline median ratio against a goal ratio. Beside the wall-clock
 * ratio (what `met` judges) it prints the CPU-time ratio of the two processes, which other load on a shared machine
 * moves far less than wall time.
 */
export function timeFigure(name, result, goal) {
  const ratio = result.subject.median / result.baseline.median;
  const cpu =
    result.subject.cpuMedian !== undefined && result.baseline.cpuMedian !== undefined
      ? {
          subject_cpu_ms: round(result.subject.cpuMedian),
          baseline_cpu_ms: round(result.baseline.cpuMedian),
          cpu_ratio: round(result.subject.cpuMedian / result.baseline.cpuMedian, 3),
        }
      : {};
  const faults =
    result.subject.faultsMedian !== undefined && result.baseline.faultsMedian !== undefined
      ? { subject_faults: result.subject.faultsMedian, baseline_faults: result.baseline.faultsMedian }
      : {};
  // The ratio's 95% interval (ratioInterval) and whether all of it meets the goal: `met` judges the median alone.
  const interval =
    result.samples && result.samples.subject.length === result.samples.baseline.length
      ? ratioInterval(
          result.samples.subject.map((s) => s.ms),
          result.samples.baseline.map((s) => s.ms),
        )
      : undefined;
  return {
    figure: name,
    subject_ms: round(result.subject.median),
    baseline_ms: round(result.baseline.median),
    ratio: round(ratio, 3),
    goal,
    met: ratio <= goal,
    ...(interval ? { ratio_ci95: interval.map((r) => round(r, 3)), met_ci95: interval[1] <= goal } : {}),
    runs: result.runs,
    subject_min_ms: round(result.subject.min),
    subject_max_ms: round(result.subject.max),
    baseline_min_ms: round(result.baseline.min),
    baseline_max_ms: round(result.baseline.max),
    ...cpu,
    ...faults,
  };
}

/**
 * What one minor page fault (a page of fresh memory touched for the first time) costs on this machine, in µs: the
 * median of `runs` fresh processes each filling a new 64 MiB buffer, time over faults (undefined when none were
 * counted). Well under 1 µs on bare metal; on a VM whose guest faults exit to the host it can be 10-100 times that, and
 * then the pages a process touches weigh in a start-up figure far more than its code does (`pageFigure`). It assumes
 * 4 KiB pages: with transparent huge pages set to `always`, a fault can map 2 MiB and the price per fault means little.
 */
export function pageFaultMicros(runs = 3) {
  const script = `
    const { minorPageFault: f0 } = process.resourceUsage();
    const t0 = process.hrtime.bigint();
    Buffer.allocUnsafeSlow(64 << 20).fill(1);
    const t1 = process.hrtime.bigint();
    const faults = process.resourceUsage().minorPageFault - f0;
    process.stdout.write(String(Number(t1 - t0) / 1e3 / faults));`;
  const samples = [];
  for (let i = 0; i < runs; i++) {
    const out = spawnSync(process.execPath, ['-e', script], { env: scrubbedEnv(), encoding: 'utf8' });
    if (out.status !== 0) throw new Error(`the page-fault probe failed: ${out.stderr}`);
    const micros = Number(out.stdout);
    // No faults counted (huge pages, another kernel): no price, rather than a division by zero.
    if (Number.isFinite(micros) && micros > 0) samples.push(micros);
  }
  return samples.length > 0 ? median(samples) : undefined;
}

/**
 * The pages of a `compare` result: how many more fresh pages the subject touched than the baseline (medians of minor
 * page faults), what they cost at this machine's `pageFaultMicros`, and that cost's share of the wall-clock gap. An
 * explanation beside a time figure, not a goal.
 */
export function pageFigure(name, result, micros) {
  const { faultsMedian: subject } = result.subject;
  const { faultsMedian: baseline } = result.baseline;
  if (subject === undefined || baseline === undefined) throw new Error(`${name}: the probe wrote no page faults`);
  const extraMs = micros === undefined ? undefined : ((subject - baseline) * micros) / 1000;
  const gapMs = result.subject.median - result.baseline.median;
  return {
    figure: name,
    subject_faults: subject,
    baseline_faults: baseline,
    extra_faults: subject - baseline,
    page_fault_us: micros === undefined ? null : round(micros, 2),
    extra_faults_ms: extraMs === undefined ? null : round(extraMs),
    gap_ms: round(gapMs),
    share_of_gap: extraMs !== undefined && gapMs > 0 ? round(extraMs / gapMs, 2) : null,
    goal: null,
    met: true,
    runs: result.runs,
  };
}

/** The peak-RSS figure of one side of a `compare` result (the highest peak over its runs), against a goal in MB. */
export function rssFigure(name, side, goalMb, runs) {
  if (side.peakRssKiB === undefined) throw new Error(`${name}: the RSS probe wrote nothing`);
  const mb = side.peakRssKiB / 1024;
  return { figure: name, peak_rss_mb: round(mb), goal_mb: goalMb, met: mb < goalMb, runs };
}

const allocProbe = new URL('./alloc-probe.cjs', import.meta.url).pathname;

/**
 * The JavaScript heap bytes each side allocates in one run, from start to exit (lib/alloc-probe.cjs: V8's sampling
 * heap profiler, collected objects included), `runs` runs each, interleaved; the median of each side in KB. The runs
 * are not timed, and the figure moves little with the machine's load, so a change of a few hundred KB shows in five
 * runs where a millisecond of wall time needs a hundred pairs.
 */
export function allocations({ subject, baseline, runs = 5, scrubbed = true }) {
  const dir = mkdtempSync(join(tmpdir(), 'crystal-bench-alloc-'));
  const kb = { subject: [], baseline: [] };
  try {
    for (let i = 0; i < runs; i++) {
      for (const [side, cmd] of [
        ['subject', subject],
        ['baseline', baseline],
      ]) {
        const file = join(dir, `${side}.alloc`);
        rmSync(file, { force: true });
        const base = scrubbed ? scrubbedEnv() : process.env;
        const env = { ...base, ...cmd.env, NODE_OPTIONS: `--require "${allocProbe}"`, BENCH_ALLOC_FILE: file };
        const run = spawnSync(cmd.argv[0], cmd.argv.slice(1), { env, ...(cmd.cwd ? { cwd: cmd.cwd } : {}), encoding: 'utf8' });
        if (run.status !== 0) throw new Error(`${cmd.argv.join(' ')} exited ${run.status ?? run.signal}\n${run.stderr}`);
        cmd.check?.(run.stdout, run.stderr);
        kb[side].push(Number(readFileSync(file, 'utf8')) / 1024);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { runs, subject: median(kb.subject), baseline: median(kb.baseline), samples: kb };
}

/** The figure of an `allocations` result: informational (no goal), the subject's extra KB and the ratio. */
export function allocFigure(name, result) {
  return {
    figure: name,
    subject_kb: Math.round(result.subject),
    baseline_kb: Math.round(result.baseline),
    extra_kb: Math.round(result.subject - result.baseline),
    ratio: round(result.subject / result.baseline, 3),
    goal: null,
    met: true,
    runs: result.runs,
  };
}
