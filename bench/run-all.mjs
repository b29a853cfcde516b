/** Runs every bench/*.mjs figure script in turn. Exits non-zero if a script fails; missed goals show as "met": false. */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('.', import.meta.url));
const scripts = readdirSync(dir)
  .filter((name) => name.endsWith('.mjs') && name !== 'run-all.mjs')
  // The durability soak takes minutes: only with CRYSTAL_SOAK=1.
  .filter((name) => name !== 'soak.mjs' || process.env.CRYSTAL_SOAK === '1')
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
