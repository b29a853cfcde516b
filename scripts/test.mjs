// Runs every package's tests with vitest and ends with the plain summary line
// "N passed, N failed" that CI reads. Extra arguments go to vitest.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { missingPrerequisites, prerequisiteLine } from './prerequisites.mjs';

const root = new URL('..', import.meta.url).pathname;
// SETUP-5: a machine without the system packages the tests drive stops here, with one line.
const missing = prerequisiteLine(missingPrerequisites());
if (missing) {
  console.error(missing);
  process.exit(1);
}
mkdirSync(`${root}.test-results`, { recursive: true });
const report = `${root}.test-results/vitest.json`;
const vitest = `${root}node_modules/vitest/vitest.mjs`;
const run = spawnSync(
  process.execPath,
  [vitest, 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...process.argv.slice(2)],
  { cwd: root, stdio: 'inherit' },
);
let passed = 0;
let failed = 0;
try {
  const json = JSON.parse(readFileSync(report, 'utf8'));
  passed = json.numPassedTests ?? 0;
  failed = (json.numFailedTests ?? 0) + (json.numFailedTestSuites ?? 0);
} catch {
  failed += 1;
}
const code = run.status ?? 1;
if (code !== 0 && failed === 0) failed = 1;
if (passed === 0 && code === 0) {
  console.log('no test ran');
  process.exit(1);
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(code);
