/**
 * Figure (issue 22: a frame's cost must not grow with the message): the terminal's layout CPU per
 * frame while a reply streams, late in a 100,000-token reply (its last 20,000 tokens, 320-400 KB
 * so far) against early in it (its first 20,000), in one process: `MarkdownStream` (a reply) and `PlainStream`
 * (reasoning), 16 tokens appended per frame as the transport hands them on (one read window), a
 * 120-column layout after each. Before the streams kept the text they read apart from the text
 * already laid out (packages/tui/src/growing-text.ts), every frame copied the whole message so far:
 * over the last 20,000 of 100,000 tokens 1,246 us a frame (27x its first 20,000) for a reply and
 * 1,180 us (54x) for reasoning, against 24-26 us now. CPU time of this process, three trials of
 * each after a warm-up, medians compared. Goal: ratio ≤ 1.5 (flat).
 */
import { MarkdownStream, PlainStream, loadMarkdown } from '../packages/tui/dist/index.js';
import { median, printFigure } from './lib/harness.mjs';

await loadMarkdown();
const TOKENS = 100_000;
const WINDOW = 20_000;
const PER_FRAME = 16;
const round = (n, d = 1) => Math.round(n * 10 ** d) / 10 ** d;

/** CPU (us) per frame over the first `WINDOW` tokens and over the last `WINDOW` tokens of a TOKENS-token stream. */
function trial(make) {
  const stream = make();
  stream.rows(120);
  let early = 0;
  let late = 0;
  let frames = 0;
  for (let sent = 0; sent < TOKENS; sent += PER_FRAME) {
    const measured = sent < WINDOW || sent >= TOKENS - WINDOW;
    const before = measured ? process.cpuUsage() : undefined;
    for (let t = 0; t < PER_FRAME; t++) stream.append('tok ');
    stream.rows(120);
    if (before) {
      const used = process.cpuUsage(before);
      if (sent < WINDOW) early += used.user + used.system;
      else late += used.user + used.system;
    }
    frames++;
  }
  const measuredFrames = WINDOW / PER_FRAME;
  return { early: early / measuredFrames, late: late / measuredFrames, frames };
}

for (const [name, make] of [
  ['reply (MarkdownStream)', () => new MarkdownStream()],
  ['reasoning (PlainStream)', () => new PlainStream(undefined)],
]) {
  trial(make); // warm-up: every measured trial runs optimised code
  const trials = [trial(make), trial(make), trial(make)];
  const early = median(trials.map((t) => t.early));
  const late = median(trials.map((t) => t.late));
  const ratio = late / early;
  printFigure({
    figure: `tui: layout CPU per frame of a streaming ${name}, its last 20,000 of 100,000 tokens vs its first 20,000`,
    late_us_per_frame: round(late),
    early_us_per_frame: round(early),
    ratio: round(ratio, 2),
    tokens_per_frame: PER_FRAME,
    trials: 3,
    goal: 1.5,
    met: ratio <= 1.5,
  });
}
