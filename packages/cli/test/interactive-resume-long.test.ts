/**
 * Long sessions in the terminal (issue 22 item 5, HIST-5): a resume shows the archive's last
 * messages under one note that counts the earlier ones, reading only the end of the archive
 * file; the rest is read when something asks for it (/export). The real binary in a pty.
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ChatMessage, emptyUsage } from '@crystal/core';
import { SessionFiles } from '@crystal/engine';
import { FakeProvider, fakeConfig, tempDir, tempHome } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { PtySession } from './pty-harness.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const textOf = (m: ChatMessage): string => m.content.map((p) => (p.type === 'text' ? p.text : '')).join('');
const FILLER = 'lorem ipsum '.repeat(1000);
const ID = '20261130-000000-fedcba';

/** A fake, a Home and a saved 2,000-message session (about 12 MB of archive) whose context is its last two. */
async function setUp(): Promise<{ fake: FakeProvider; home: string; workspace: string; archive: ChatMessage[]; file: string }> {
  const fake = await FakeProvider.start({ replies: [{ text: 'the new answer' }] });
  cleanups.push(() => fake.close());
  const home = tempHome(fakeConfig(fake.baseUri));
  cleanups.push(() => home.dispose());
  const workspace = tempDir('crystal-ws-');
  const archive: ChatMessage[] = [];
  for (let i = 0; i < 1000; i++) {
    archive.push({ role: 'user', content: [{ type: 'text', text: `question ${i}` }] });
    // The bulk is in the messages a resume does not show, so the shown ones fit the emulator's scroll-back.
    archive.push({ role: 'assistant', content: [{ type: 'text', text: `answer ${i}${i < 950 ? `: ${FILLER}` : ''}` }] });
  }
  await SessionFiles.create(home.path, ID).save({
    id: ID,
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
  const head = JSON.parse(readFileSync(join(home.path, 'sessions', `${ID}.json`), 'utf8'));
  return { fake, home: home.path, workspace, archive, file: join(home.path, 'sessions', head.log.archive.file) };
}

/** NODE_OPTIONS that make the process write its /proc/self/io at exit to the returned file. */
function ioProbe(): { env: Record<string, string>; rchar: () => number } {
  const dir = tempDir('crystal-io-probe-');
  const probe = join(dir, 'io-probe.cjs');
  const report = join(dir, 'io.txt');
  writeFileSync(
    probe,
    "process.on('exit', () => require('node:fs').writeFileSync(process.env.IO_PROBE_FILE, require('node:fs').readFileSync('/proc/self/io', 'utf8')));\n",
  );
  return {
    env: { NODE_OPTIONS: `--require ${probe}`, IO_PROBE_FILE: report },
    rchar: () => Number(/rchar:\s+(\d+)/.exec(readFileSync(report, 'utf8'))?.[1]),
  };
}

describe('HIST-5 resuming a long session in the terminal (issue 22 item 5)', () => {
  it('HIST-5 crystal --resume of 2,000 messages shows the last ones under a note counting the rest, reads only the archive end, and saves the new turn after all', async () => {
    const { fake, home, workspace, archive, file } = await setUp();
    const probe = ioProbe();
    const session = PtySession.start({ home, cwd: workspace, args: ['--resume', ID], env: probe.env });
    cleanups.push(async () => {
      session.kill();
      await session.exited;
    });
    await session.waitFor(() => session.bufferLines().join('\n').includes('question 999'));
    const shown = session.bufferLines().join('\n');
    expect(shown).toContain("1,950 earlier messages are not shown; /export or 'crystal export 20261130-000000-fedcba'");
    expect(shown).toContain('question 975');
    expect(shown).not.toContain('question 974');

    await session.type('one more question');
    session.write('\r');
    await session.waitFor('the new answer');
    await session.waitIdle();
    session.write('\x03');
    session.write('\x03');
    expect((await session.exited).exitCode).toBe(0);
    expect(session.output).toContain(`Session ${ID} saved.`);

    expect(probe.rchar()).toBeGreaterThan(0);
    expect(probe.rchar()).toBeLessThan(statSync(file).size);
    expect(fake.requests).toHaveLength(1);
    const full = SessionFiles.load(home, ID).state;
    expect(full.archive.map(textOf)).toEqual([...archive.map(textOf), 'one more question', 'the new answer']);
  }, 60_000);

  it('HIST-5 /export after a resume of 2,000 messages writes every message: the archive left on disk is read when asked for', async () => {
    const { home, workspace, archive } = await setUp();
    const session = PtySession.start({ home, cwd: workspace, args: ['--resume', ID] });
    cleanups.push(async () => {
      session.kill();
      await session.exited;
    });
    await session.waitFor(() => session.bufferLines().join('\n').includes('question 999'));
    const target = join(tempDir('crystal-export-'), 'all.json');
    await session.type(`/export json ${target}`);
    session.write('\r');
    await session.waitFor('Exported to');
    const exported = JSON.parse(readFileSync(target, 'utf8'));
    expect(exported.archive).toHaveLength(2000);
    expect(exported.messageCount).toBe(2000);
    expect(exported.archive.map((item: { content?: unknown }) => JSON.stringify(item)).join('')).toContain(
      textOf(archive[0] as ChatMessage),
    );
  }, 60_000);
});
