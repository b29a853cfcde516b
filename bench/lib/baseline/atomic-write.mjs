/** Baseline copy for save-hops.mjs: writeFileAtomic before issue 22 (commit c2191ad, compiled). */
import { promises as fs } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { uniqueHex } from '../../../packages/core/dist/index.js';
async function writeFileAtomic(path, data, mode = 384) {
  const dir = dirname(path);
  await fs.mkdir(dir, { recursive: true, mode: 448 });
  const temp = join(dir, `.${basename(path)}.${process.pid}.${uniqueHex(4)}.tmp`);
  const handle = await fs.open(temp, 'wx', mode);
  try {
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(temp, path);
  } catch (error) {
    await fs.rm(temp, { force: true }).catch(() => void 0);
    throw error;
  }
  await syncDir(dir);
}
async function syncDir(dir) {
  let handle;
  try {
    handle = await fs.open(dir, 'r');
    await handle.sync();
  } catch {
  } finally {
    await handle?.close();
  }
}
export { writeFileAtomic };
