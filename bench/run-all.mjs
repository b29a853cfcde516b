/** Runs every bench/*.mjs figure script in turn. Exits non-zero if a script fails; missed goals show as "met": false. */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('.', import.meta.url));
const scripts = readdirSync(dir)
  .filter((name) => name.endsWith('.mjs') && name !== 'run-all.mjs')
  .sort();

const failed = [];
for (const name of scripts) {
  const { status, signal } = spawnSync(process.execPath, [fileURLToPath(new URL(name, import.meta.url))], { stdio: 'inherit' });
  if (status !== 0) failed.push(`${name} (${status ?? signal})`);
}
if (failed.length) {
  process.stderr.write(`bench: failed: ${failed.join(', ')}\n`);
  process.exitCode = 1;
}
