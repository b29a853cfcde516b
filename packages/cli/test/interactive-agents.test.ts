/**
 * AGENT-4 in the terminal: the real binary in a pty read through @xterm/headless. A child
 * shows as its own card with its own progress row; its approval is labelled with its path;
 * Ctrl+O expands the card to where its transcript is kept.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCrystal } from '@crystal/testkit';
import { PtySession, type Scenario, scenario } from './pty-harness.js';

let current: Scenario | undefined;
afterEach(async () => {
  await current?.dispose();
  current = undefined;
});

describe('AGENT-4 child agents in the terminal', () => {
  it('AGENT-4 a child card with its own progress row; its approval is labelled; Ctrl+O shows its transcript', async () => {
    current = await scenario({
      replies: [
        // The parent delegates; the child asks to write; the operator denies; the child answers; the parent ends.
        { toolCalls: [{ id: 't1', name: 'task', arguments: { description: 'write the file', prompt: 'Write out.txt.' } }] },
        { toolCalls: [{ id: 'c1', name: 'write', arguments: { path: 'out.txt', contents: 'x\n' } }] },
        { text: 'The write was refused by the operator.' },
        { text: 'The child could not write.' },
      ],
    });
    const { session, workspace, fake } = current;
    await session.waitFor('Type a message');
    await session.type('delegate');
    session.write('\r');
    const asking = await session.waitFor(/Approve Write\? · asked by main\/general#1/);
    // The card: path and task in its head, its step, and its own progress row with its counts.
    expect(asking).toMatch(/Agent main\/general#1 write the file/);
    expect(asking).toMatch(/│ ● Write out\.txt/);
    await session.waitFor(/│ \S Awaiting Approval · \d+s · 1 model call · 1 tool call/);
    session.write('n');
    await session.waitFor('The child could not write.');
    const done = await session.waitIdle();
    expect(done).toMatch(/│ ● Write out\.txt\s+Denied/);
    expect(done).toMatch(/│ Done · 2 model calls · 1 tool call/);
    expect(done).toContain('The write was refused by the operator.');
    expect(existsSync(join(workspace, 'out.txt'))).toBe(false);
    // The child's text never became the main answer: the parent's final request holds it only as the task result.
    const last = JSON.stringify(fake.requests.at(-1)?.body);
    expect(last).toContain('The write was refused by the operator.');
    expect(last).not.toMatch(/"id":"c1"|"tool_call_id":"c1"/);
    session.write('\x0f');
    const expanded = await session.waitFor(/Transcript: .*children/);
    // The card wraps the line: join its rows back.
    expect(expanded.replace(/\n\s*│ /g, ' ')).toMatch(/crystal export \S+ --agent main\/general#1/);
  });

  it('AGENT-4 a resumed session shows the child card again, rebuilt from its saved transcript', async () => {
    current = await scenario({
      replies: [
        { toolCalls: [{ id: 't1', name: 'task', arguments: { description: 'list it', prompt: 'List the files.' } }] },
        { toolCalls: [{ id: 'c1', name: 'list', arguments: { path: '.' } }] },
        { text: 'CHILD SAYS two files.' },
        { text: 'The parent is done.' },
      ],
    });
    current.session.kill();
    await current.session.exited;
    const first = await runCrystal(['run', 'delegate'], { home: current.home.path, cwd: current.workspace });
    expect(first.code).toBe(0);
    const id = readdirSync(join(current.home.path, 'sessions'))
      .find((f) => f.endsWith('.json'))
      ?.replace(/\.json$/, '');
    const resumed = PtySession.start({ home: current.home.path, cwd: current.workspace, args: ['-r', id as string] });
    try {
      const screen = await resumed.waitFor('The parent is done.');
      expect(screen).toMatch(/● Agent main\/general#1 list it/);
      expect(screen).toMatch(/│ ● List \./);
      expect(screen).toMatch(/│ Done · 2 model calls · 1 tool call/);
      expect(screen).toContain('CHILD SAYS two files.');
    } finally {
      resumed.kill();
      await resumed.exited;
    }
  });
});
