/** Every write in Home is temp file + fsync + atomic rename: a file is never half-written. */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { basename, dirname, join } from 'node:path';

export async function writeFileAtomic(path: string, data: string | Uint8Array, mode = 0o600): Promise<void> {
  const dir = dirname(path);
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const temp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const handle = await fs.open(temp, 'w', mode);
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
