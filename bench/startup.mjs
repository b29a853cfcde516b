/**
 * Figure: `crystal --version` against a bare `node -e 0`, both one node process, in a scrubbed environment (goal:
 * ratio ≤ 1.1, issue 22); the same pair with the caller's environment inherited is printed beside it (issue 22 item 3).
 * 40 interleaved pairs after 5 discarded ones, medians compared: a Node start is ~20 ms, so a few noisy runs would
 * otherwise move the ratio by tenths.
 */
import { fileURLToPath } from 'node:url';
import { compare, inheritedNote, printFigure, runCount, timeFigure } from './lib/harness.mjs';

const crystal = fileURLToPath(new URL('../packages/cli/bin/crystal.js', import.meta.url));

const pair = {
  subject: {
    argv: [process.execPath, crystal, '--version'],
    check: (stdout) => {
      if (!stdout.startsWith('Crystal Code ')) throw new Error(`crystal --version printed: ${stdout}`);
    },
  },
  baseline: { argv: [process.execPath, '-e', '0'] },
  runs: runCount(40),
  warmup: 5,
};
const clean = await compare({ ...pair, scrubbed: true });
printFigure({ ...timeFigure('startup: crystal --version vs node -e 0', clean, 1.1), environment: 'scrubbed' });
const inherited = await compare(pair);
printFigure({
  ...timeFigure('startup: crystal --version vs node -e 0 (inherited environment)', inherited, 1.1),
  environment: 'inherited',
  inherited_variables: inheritedNote(),
});
