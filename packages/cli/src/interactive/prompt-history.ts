/**
 * Composer history per workspace (reference §8.3): `prompt-history.jsonl` in Home, one
 * `{"workspace","text"}` object per line, the newest 200 text-only entries per workspace.
 * It is read before the first frame (only its last 2 MiB), so Up works at once.
 */
// node:fs's callback `appendFile`, not node:fs/promises: this module is read before the first frame (issue 22).
import { appendFile, closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';

export const HISTORY_LIMIT = 200;
const READ_LIMIT = 2 * 1024 * 1024;

export function historyPath(home: string): string {
  return join(home, 'prompt-history.jsonl');
}

export function loadHistory(home: string, workspace: string): string[] {
  let text: string;
  try {
    const fd = openSync(historyPath(home), 'r');
    try {
      const size = fstatSync(fd).size;
      const length = Math.min(size, READ_LIMIT);
      const buffer = Buffer.alloc(length);
      readSync(fd, buffer, 0, length, size - length);
      text = buffer.toString('utf8');
    } finally {
      closeSync(fd);
    }
  } catch {
    return [];
  }
  const entries: string[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    try {
      const row = JSON.parse(line) as { workspace?: unknown; text?: unknown };
      if (row.workspace === workspace && typeof row.text === 'string') entries.push(row.text);
    } catch {
      // A damaged (or cut) line is skipped; the others still load.
    }
  }
  return entries.slice(-HISTORY_LIMIT);
}

export function appendHistory(home: string, workspace: string, text: string): Promise<void> {
  return new Promise((resolve) =>
    appendFile(historyPath(home), `${JSON.stringify({ workspace, text })}\n`, { mode: 0o600 }, () => resolve()),
  );
}
