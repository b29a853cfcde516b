import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crystalBin, FakeProvider, fakeConfig, type TempHome, tempDir, tempHome } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';

let fake: FakeProvider | undefined;
let home: TempHome | undefined;
let child: ChildProcess | undefined;
afterEach(async () => {
  child?.kill('SIGKILL');
  child = undefined;
  await fake?.close();
  fake = undefined;
  home?.dispose();
  home = undefined;
});

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 20));
}

describe('tools never block on special files (SEC-5)', () => {
  it('SEC-5 grep and read on a FIFO in the workspace finish with a clear result, and crystal run still answers SIGTERM', async () => {
    const ws = tempDir('crystal-fifo-');
    execFileSync('mkfifo', [join(ws, 'pipe')]);
    writeFileSync(join(ws, 'a.txt'), 'needle here\n');
    fake = await FakeProvider.start({
      replies: [
        {
          toolCalls: [
            { id: 'g1', name: 'grep', arguments: { pattern: 'needle', path: 'pipe' } },
            { id: 'g2', name: 'grep', arguments: { pattern: 'needle' } },
            { id: 'r1', name: 'read', arguments: { path: 'pipe' } },
            { id: 'l1', name: 'glob', arguments: { pattern: '*' } },
          ],
        },
        // The next answer streams slowly: the run is busy on the network when SIGTERM comes.
        { text: 'a b c d e f g h', delayMs: 60_000 },
      ],
      whenExhausted: 'error',
    });
    home = tempHome(fakeConfig(fake.baseUri));
    const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: home.path, CRYSTAL_HOME: home.path };
    const proc = spawn(process.execPath, [crystalBin, 'run', '--format', 'json', 'search'], { cwd: ws, env });
    child = proc;
    let stdout = '';
    proc.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    const exited = new Promise<number | null>((resolve) => proc.on('close', (code) => resolve(code)));
    // The second request carries the tool results: grep and read returned.
    await until(() => fake !== undefined && fake.requests.length >= 2);
    const messages = (fake.requests[1]?.body as { messages: Array<{ role: string; content: string }> }).messages;
    const results = messages.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(results[0]).toBe('pipe is not a regular file (a FIFO) and will not be read.');
    expect(results[1]).toBe('a.txt:1:needle here');
    expect(results[2]).toBe('pipe is not a regular file (a FIFO) and will not be read.');
    expect(results[3]).toBe('a.txt');
    proc.kill('SIGTERM');
    expect(await exited).toBe(5);
    expect(JSON.parse(stdout).stopReason).toBe('interrupted');
  }, 30_000);
});
