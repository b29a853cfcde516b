/**
 * CKPT-3 / CKPT-4 in the terminal: the real binary in a pty, read through @xterm/headless; the
 * fake provider over HTTP, real bash, real files.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type FakeReply, tempDir } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type Scenario, scenario, userTexts } from './pty-harness.js';

let current: Scenario | undefined;
afterEach(async () => {
  await current?.dispose();
  current = undefined;
});

const bash = (command: string): FakeReply => ({ toolCalls: [{ name: 'bash', arguments: { command } }] });
const DOWN = '\x1b[B';

/** Two turns, each changing a.txt with bash (zero -> one -> two). */
async function twoTurns(replies: FakeReply[]): Promise<Scenario> {
  const workspace = tempDir('crystal-rewind-ws-');
  writeFileSync(join(workspace, 'a.txt'), 'zero\n');
  const s = await scenario({
    args: ['--approval', 'full'],
    workspace,
    replies: [bash('echo one > a.txt'), { text: 'First done.' }, bash('echo two > a.txt'), { text: 'Second done.' }, ...replies],
  });
  const { session } = s;
  await session.waitFor('Type a message');
  await session.type('first change');
  session.write('\r');
  await session.waitFor('First done.');
  await session.waitIdle();
  await session.type('second change');
  session.write('\r');
  await session.waitFor('Second done.');
  await session.waitIdle();
  expect(readFileSync(join(workspace, 'a.txt'), 'utf8')).toBe('two\n');
  return s;
}

describe('rewind picker in the terminal', () => {
  it('CKPT-3 TUIX-1 Esc Esc opens the rewind picker from the engine list; "code and conversation" restores the files and puts the message back in the composer', async () => {
    current = await twoTurns([{ text: 'Edited answer.' }]);
    const { session, workspace, fake } = current;
    session.write('\x1b');
    session.write('\x1b');
    const list = await session.waitFor('Rewind to before an earlier message');
    expect(list).toMatch(/› second change\s+#2 · just now · 1 file changed since/);
    expect(list).toMatch(/first change\s+#1 · just now · 1 file changed since/);
    // The picker stands for the /rewind listing: its text copy is not printed as well.
    expect(session.output).not.toContain('Rewind with /rewind N');
    session.write('\r');
    const choice = await session.waitFor('Restore code and conversation');
    expect(choice).toContain('Rewind to before #2: second change');
    expect(choice).toContain('Restore conversation');
    expect(choice).toContain('Restore code');
    expect(choice).toContain('Never mind');
    session.write('\r');
    await session.waitFor('Work › second change');
    expect(readFileSync(join(workspace, 'a.txt'), 'utf8')).toBe('one\n');
    await session.type(' again');
    session.write('\r');
    await session.waitFor('Edited answer.');
    // The model context went back to before message 2; the edited message replaces it.
    expect(userTexts(fake).at(-1)).toEqual(['first change', 'second change again']);
  });

  it('CKPT-3 CKPT-4 /rewind alone opens the same picker; "code" keeps the conversation; a changed file is asked about and overwritten only when chosen', async () => {
    current = await twoTurns([{ text: 'Still talking.' }]);
    const { session, workspace, fake } = current;
    const file = join(workspace, 'a.txt');
    writeFileSync(file, 'mine\n');
    const pickCodeOfFirst = async (): Promise<string> => {
      await session.type('/rewind');
      session.write('\r');
      await session.waitFor('Rewind to before an earlier message');
      await session.type('first');
      await session.waitFor((s) => s.includes('› first change') && !s.includes('second change  #2'));
      session.write('\r');
      await session.waitFor('Restore code and conversation');
      session.write(`${DOWN}${DOWN}`);
      await session.waitFor('› Restore code ');
      session.write('\r');
      return session.waitFor('1 file changed since the checkpoint');
    };
    const ask = await pickCodeOfFirst();
    expect(ask).toContain('› Keep my files (do not rewind)');
    expect(ask).toContain('Overwrite them with the checkpoint');
    expect(ask).toContain('/rewind 1 code force');
    expect(ask).toContain('a.txt: changed since the checkpoint by someone else');
    session.write('\r');
    await session.waitForGone('1 file changed since the checkpoint');
    expect(readFileSync(file, 'utf8')).toBe('mine\n');

    await pickCodeOfFirst();
    session.write(`${DOWN}\r`);
    await session.waitFor('Rewound to before message 1: restored 1 file (a.txt).');
    expect(readFileSync(file, 'utf8')).toBe('zero\n');
    // Code only: the composer stays empty and the conversation goes on as it was.
    expect(session.screen()).not.toContain('Work › first change');
    await session.type('go on');
    session.write('\r');
    await session.waitFor('Still talking.');
    expect(userTexts(fake).at(-1)).toEqual(['first change', 'second change', 'go on']);
  });
});
