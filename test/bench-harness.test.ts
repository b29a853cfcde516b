/**
 * Issue 22 item 3 (honest benchmarks): a timing figure prints its ratio's 95% interval beside the ratio of medians, so a
 * reading near its goal (1.16 against 1.2) says whether the runs put it under the goal or only its median.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: the bench harness (JavaScript) has no declarations.
import { median, ratioInterval, timeFigure } from '../bench/lib/harness.mjs';

type Interval = [number, number];
const interval = ratioInterval as (subject: number[], baseline: number[], options?: { seed?: number }) => Interval;

/** n runs of a side: `base(i)` plus noise from a fixed sequence (deterministic, roughly uniform in +/- spread). */
function side(n: number, base: (i: number) => number, spread: number, salt: number): number[] {
  return Array.from({ length: n }, (_, i) => base(i) + spread * (((i * 7919 + salt * 104729) % 1000) / 500 - 1));
}

describe('issue 22 item 3: the run ratio with its 95% interval', () => {
  it('issue 22 the interval holds the ratio of medians and is the same for the same runs', () => {
    const subject = side(30, () => 116, 8, 1);
    const baseline = side(30, () => 100, 8, 2);
    const [lo, hi] = interval(subject, baseline);
    const ratio = (median(subject) as number) / (median(baseline) as number);
    expect(lo).toBeLessThanOrEqual(ratio);
    expect(hi).toBeGreaterThanOrEqual(ratio);
    expect(hi - lo).toBeGreaterThan(0.01);
    expect(interval(subject, baseline)).toEqual([lo, hi]);
  });

  it('issue 22 runs are drawn in pairs: a drift that moves both sides of each pair does not widen the interval', () => {
    // The machine slows down run by run (100 to 190 ms); each subject run is 1.1x its own pair's baseline.
    const baseline = Array.from({ length: 30 }, (_, i) => 100 + 3 * i);
    const subject = baseline.map((ms) => ms * 1.1);
    const [lo, hi] = interval(subject, baseline);
    // Unpaired, the medians of the two sides would be drawn from different runs: an interval of about 1.0-1.2.
    expect(lo).toBeCloseTo(1.1, 2);
    expect(hi).toBeCloseTo(1.1, 2);
  });

  it('issue 22 a median under the goal with an interval over it is met, not met_ci95', () => {
    const subject = side(30, () => 116, 14, 3);
    const baseline = side(30, () => 100, 14, 4);
    const figure = timeFigure(
      'example',
      {
        runs: 30,
        subject: { median: median(subject), min: Math.min(...subject), max: Math.max(...subject) },
        baseline: { median: median(baseline), min: Math.min(...baseline), max: Math.max(...baseline) },
        samples: { subject: subject.map((ms) => ({ ms })), baseline: baseline.map((ms) => ({ ms })) },
      },
      1.2,
    ) as { ratio: number; met: boolean; ratio_ci95: Interval; met_ci95: boolean };
    expect(figure.ratio).toBeLessThan(1.2);
    expect(figure.met).toBe(true);
    expect(figure.ratio_ci95[0]).toBeLessThan(figure.ratio);
    expect(figure.ratio_ci95[1]).toBeGreaterThan(1.2);
    expect(figure.met_ci95).toBe(false);
  });

  it('issue 22 unpaired runs are refused, not read as pairs', () => {
    expect(() => interval([1, 2, 3], [1, 2])).toThrow(/paired runs/);
  });
});

describe('issue 22: the JavaScript heap bytes a run allocates (bench/lib/alloc-probe.cjs)', () => {
  /** KB the probe reports for a Node process that allocates `objects` short-lived 16-field objects. */
  function allocatedKb(objects: number): number {
    const dir = mkdtempSync(join(tmpdir(), 'crystal-alloc-probe-'));
    try {
      const file = join(dir, 'alloc');
      const probe = join(__dirname, '..', 'bench', 'lib', 'alloc-probe.cjs');
      // Each object escapes into a ring of 1,024 slots (so V8 cannot elide it) and dies when its slot is reused.
      const script = `const ring = new Array(1024); for (let i = 0; i < ${objects}; i++) ring[i & 1023] = { a: i, b: i, c: i, d: i, e: i, f: i, g: i, h: i, i, j: i, l: i, m: i, n: i, p: i, q: i, r: i };`;
      const run = spawnSync(process.execPath, ['--require', probe, '-e', script], {
        env: { PATH: process.env.PATH, BENCH_ALLOC_FILE: file },
        encoding: 'utf8',
      });
      expect(run.status, run.stderr).toBe(0);
      return Number(readFileSync(file, 'utf8')) / 1024;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it('issue 22 objects the garbage collector already collected are counted: 20,000 more 16-field objects read about 3 MB more', () => {
    const few = allocatedKb(1_000);
    const many = allocatedKb(21_000);
    // A 16-field object is 152 bytes on a 64-bit heap without pointer compression; sampling is an estimate.
    const expectedKb = (20_000 * 152) / 1024;
    expect(many - few).toBeGreaterThan(expectedKb * 0.7);
    expect(many - few).toBeLessThan(expectedKb * 1.3);
  });
});
