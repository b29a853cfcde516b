/**
 * Long sessions (issue 22 item 5, HIST-2): `crystal run --resume` only appends to the archive, so
 * it must not read it. Proved on the real binary by what the process read (`rchar` of
 * /proc/self/io, written at exit by a preloaded probe): less than the archive file holds.
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChatMessage } from '@crystal/core';
import { emptyUsage } from '@crystal/core';
import { SessionFiles } from '@crystal/engine';
import { FakeProvider, fakeConfig, runCrystal, tempDir, tempHome } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const textOf = (m: ChatMessage): string => m.content.map((p) => (p.type === 'text' ? p.text : '')).join('');
const BIG = 'x'.repeat(12_000);

/** A saved session of 2,000 messages (about 12 MB of archive) whose context is its last two. */
async function longSession(home: string, workspace: string, id: string): Promise<{ archive: ChatMessage[]; file: string }> {
  const archive: ChatMessage[] = [];
  for (let i = 0; i < 1000; i++) {
    archive.push({ role: 'user', content: [{ type: 'text', text: `question ${i}` }] });
    archive.push({ role: 'assistant', content: [{ type: 'text', text: `answer ${i} ${BIG}` }] });
  }
  await SessionFiles.create(home, id).save({
    id,
    workspace,
    createdUtc: '2026-11-30T00:00:00.000Z',
    updatedUtc: '2026-11-30T00:00:00.000Z',
    provider: 'fake',
    model: 'fake-model',
    context: archive.slice(-2),
    archive,
    userTurns: 1000,
    modelCalls: 1000,
    toolCalls: 0,
    usage: emptyUsage,
    cumulativeUsage: emptyUsage,
    queued: [],
    images: [],
    imageMarkersTagged: true,
    pendingApprovals: [],
  });
  const head = JSON.parse(readFileSync(join(home, 'sessions', `${id}.json`), 'utf8'));
  return { archive, file: join(home, 'sessions', head.log.archive.file) };
}

describe('HIST-2 crystal run --resume of a long session (issue 22 item 5)', () => {
  it('HIST-2 crystal run --resume reads none of the archive it appends to, and the turn lands after every archived message', async () => {
    const fake = await FakeProvider.start({ replies: [{ text: 'the new answer' }] });
    cleanups.push(() => fake.close());
    const home = tempHome(fakeConfig(fake.baseUri));
    cleanups.push(() => home.dispose());
    const workspace = tempDir('crystal-ws-');
    const id = '20261130-000000-abcdef';
    const { archive, file } = await longSession(home.path, workspace, id);
    const archiveBytes = statSync(file).size;
    expect(archiveBytes).toBeGreaterThan(10_000_000);

    const probeDir = tempDir('crystal-io-probe-');
    const probe = join(probeDir, 'io-probe.cjs');
    const report = join(probeDir, 'io.txt');
    writeFileSync(
      probe,
      "process.on('exit', () => require('node:fs').writeFileSync(process.env.IO_PROBE_FILE, require('node:fs').readFileSync('/proc/self/io', 'utf8')));\n",
    );
    const run = await runCrystal(['run', '--resume', id, '--format', 'json', 'one more question'], {
      home: home.path,
      cwd: workspace,
      env: { NODE_OPTIONS: `--require ${probe}`, IO_PROBE_FILE: report },
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ stopReason: 'completed' });

    // Everything the process read: its own code, the head, the context, the HTTP reply; not the archive.
    const rchar = Number(/rchar:\s+(\d+)/.exec(readFileSync(report, 'utf8'))?.[1]);
    expect(rchar).toBeGreaterThan(0);
    expect(rchar).toBeLessThan(archiveBytes);

    // The request carried the context only, and the archive file grew by the new turn alone.
    const sent = (fake.requests[0]?.body as { messages: { content: unknown }[] }).messages;
    expect(JSON.stringify(sent)).toContain('question 999');
    expect(JSON.stringify(sent)).not.toContain('question 998');
    const full = SessionFiles.load(home.path, id).state;
    expect(full.archive.map(textOf)).toEqual([...archive.map(textOf), 'one more question', 'the new answer']);
    const head = JSON.parse(readFileSync(join(home.path, 'sessions', `${id}.json`), 'utf8'));
    expect(join(home.path, 'sessions', head.log.archive.file)).toBe(file);
    expect(head).toMatchObject({ title: 'question 0', messageCount: 2002, userTurns: 1001 });
  }, 60_000);
});
