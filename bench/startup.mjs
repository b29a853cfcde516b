/** Figure: `crystal --version` against a bare `node -e 0`, both one node process. Goal: ratio ≤ 1.3. */
import { fileURLToPath } from 'node:url';
import { compare, printFigure, runCount, timeFigure } from './lib/harness.mjs';

const crystal = fileURLToPath(new URL('../packages/cli/bin/crystal.js', import.meta.url));

const result = await compare({
  subject: {
    argv: [process.execPath, crystal, '--version'],
    check: (stdout) => {
      if (!stdout.startsWith('Crystal Code ')) throw new Error(`crystal --version printed: ${stdout}`);
    },
  },
  baseline: { argv: [process.execPath, '-e', '0'] },
  runs: runCount(15),
  warmup: 3,
});
printFigure(timeFigure('startup: crystal --version vs node -e 0', result, 1.3));
