/**
 * Issue 22 item 4: `isoTime` (packages/core/src/iso-time.ts) stands for `Date.prototype.toISOString`,
 * whose first call costs a start 0.6-1.6 ms; it must write the same text (ECMA-262's date time
 * string format) for every date.
 */
import { describe, expect, it } from 'vitest';
import { isoTime } from '../src/index.js';

describe('isoTime: the text of toISOString without its first-call cost (issue 22)', () => {
  it('writes YYYY-MM-DDTHH:mm:ss.sssZ in UTC, as toISOString does, across years, months, leap days and milliseconds', () => {
    const dates = [
      new Date(0),
      new Date(Date.UTC(2026, 11, 7, 10, 5, 18, 123)),
      new Date(Date.UTC(2024, 1, 29, 23, 59, 59, 999)),
      new Date(Date.UTC(2000, 0, 1, 0, 0, 0, 1)),
      new Date(Date.UTC(1969, 11, 31, 23, 59, 59, 990)),
      new Date(Date.UTC(9999, 11, 31, 23, 59, 59, 999)),
      new Date('0000-01-01T00:00:00.000Z'),
      new Date('0099-03-04T05:06:07.089Z'),
    ];
    // And a spread of instants over two centuries, a different millisecond each.
    for (let i = 0; i < 2000; i++) dates.push(new Date(-2_208_988_800_000 + i * 3_155_695_217));
    for (const date of dates) expect(isoTime(date), String(date.getTime())).toBe(date.toISOString());
  });

  it('is now when given nothing', () => {
    const before = Date.now();
    const text = isoTime();
    expect(text).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Date.parse(text)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(text)).toBeLessThanOrEqual(Date.now());
  });

  it('writes the extended years outside 0000-9999 and throws for an invalid date, as toISOString does', () => {
    for (const date of [new Date('+010000-01-01T00:00:00.000Z'), new Date(Date.UTC(-1, 5, 1)), new Date(-8.64e15)]) {
      expect(isoTime(date)).toBe(date.toISOString());
    }
    expect(isoTime(new Date(Date.UTC(-1, 5, 1)))).toMatch(/^-000001-06-01T/);
    expect(() => isoTime(new Date(Number.NaN))).toThrow(RangeError);
  });
});
