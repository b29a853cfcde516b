/**
 * Issue 22 item 3 (honest benchmarks): a timing figure prints its ratio's 95% interval beside the ratio of medians, so a
 * reading near its goal (1.16 against 1.2) says whether the runs put it under the goal or only its median.
 */
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
