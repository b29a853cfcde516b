// How long the main bundle's file is (issue 22 item 4): scripts/bundle.mjs pads it with spaces to
// Node's EXTERN_APEX, so the text the bin compiles from it is an external string.
import { readFileSync, writeFileSync } from 'node:fs';

/**
 * Node's EXTERN_APEX (src/string_bytes.cc): a buffer's latin1 text of at least this many bytes
 * becomes an external string (its characters outside V8's heap), a shorter one a heap string.
 */
export const EXTERNAL_TEXT = 0xfbee9;

/**
 * The length a bundle of `size` bytes is written at: one of at least half of EXTERNAL_TEXT is
 * padded to it, any other left as it is. A heap string that long is allocated in the young
 * generation, and when the first scavenge promotes it V8 counts its ~680 KB as survivors, which
 * grows the young generation a scavenge early; every scavenge after that copies into fresh pages.
 * As an external string the main bundle's text stays out of the young generation: a `crystal run`
 * touches ~95 fewer fresh pages (60 interleaved pairs, padding and copy included), about a
 * millisecond where a fault costs 11 us. Below half, the padding would cost more pages than it
 * saves. The padding is written in the file, not added at each start, so the bin reads it off the
 * main thread with the rest (packages/cli/src/launch.ts): spaces after the bundle's last line, so
 * no line, column or function's text changes.
 */
export function paddedLength(size) {
  return size >= EXTERNAL_TEXT / 2 && size < EXTERNAL_TEXT ? EXTERNAL_TEXT : size;
}

/** Pads the bundle at `file` with spaces to `paddedLength` of its size. */
export function padBundle(file) {
  const bytes = readFileSync(file);
  const length = paddedLength(bytes.length);
  if (length === bytes.length) return;
  const padded = Buffer.alloc(length, 0x20);
  bytes.copy(padded);
  writeFileSync(file, padded);
}
