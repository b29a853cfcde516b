/**
 * `Date.prototype.toISOString` costs a start 0.6-1.6 ms at its first call (V8 sets up its date
 * formatting then), more than all of `crystal run`'s own date work after it (issue 22 item 4).
 * `isoTime` writes the same text from the date's UTC fields.
 */

const pad = (n: number, width: number): string => String(n).padStart(width, '0');

/** `date.toISOString()`'s text (`2026-12-07T10:05:18.123Z`), without its first-call cost; throws as it does for an invalid date. */
export function isoTime(date: Date = new Date()): string {
  const year = date.getUTCFullYear();
  // Outside 0000-9999 (and for an invalid date) toISOString writes or throws what it does itself.
  if (!(year >= 0 && year <= 9999)) return date.toISOString();
  return (
    `${pad(year, 4)}-${pad(date.getUTCMonth() + 1, 2)}-${pad(date.getUTCDate(), 2)}` +
    `T${pad(date.getUTCHours(), 2)}:${pad(date.getUTCMinutes(), 2)}:${pad(date.getUTCSeconds(), 2)}` +
    `.${pad(date.getUTCMilliseconds(), 3)}Z`
  );
}
