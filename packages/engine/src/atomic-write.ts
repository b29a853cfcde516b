/** Every write in Home is temp file + fsync + atomic rename: a file is never half-written. */
import { promises as fs } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { uniqueHex } from '@crystal/core';

export async function writeFileAtomic(path: string, data: string | Uint8Array, mode = 0o600): Promise<void> {
  const dir = dirname(path);
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  // The name need only differ from other writers' (pid, then random: no node:crypto to load, issue 22
  // item 4); it is opened exclusively, so nothing already at that name is ever written through.
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
    // REL-3: a failed write (disk full, …) leaves no temp file behind.
    await fs.rm(temp, { force: true }).catch(() => undefined);
    throw error;
  }
  await syncDir(dir);
}

async function syncDir(dir: string): Promise<void> {
  let handle: fs.FileHandle | undefined;
  try {
    handle = await fs.open(dir, 'r');
    await handle.sync();
  } catch {
    // Some file systems refuse fsync on a directory; the rename is still atomic.
  } finally {
    await handle?.close();
  }
}
