import { afterEach, describe, expect, it } from 'vitest';
import { type Scenario, scenario } from './pty-harness.js';

let current: Scenario | undefined;
afterEach(async () => {
  await current?.dispose();
  current = undefined;
});

describe('terminal defects seen in daily use', () => {
  it('TUI-2 issue-15 reasoning streams with single spaces between words, without a resize', async () => {
    const words = 'The user wants a small change to the parser and a test for it'.split(' ');
    current = await scenario({
      replies: [{ reasoning: words.map((w, i) => (i === 0 ? w : ` ${w}`)), text: 'Done thinking.', delayMs: 40 }],
    });
    const { session } = current;
    await session.waitFor('Type a message');
    await session.type('think');
    session.write('\r');
    const screen = await session.waitFor('Done thinking.');
    expect(screen).toContain('┆ The user wants a small change to the parser and a test for it');
    expect(screen).not.toMatch(/\w {2}\w/);
  });
});

describe('the context meter after a resume', () => {
  it('TUI-3 issue-15 CTX after a resume is the last request of the saved turn, not the sum of its rounds', async () => {
    current = await scenario({
      modelExtra: { contextWindow: 10_000 },
      replies: [
        { toolCalls: [{ id: 'call_list', name: 'list', arguments: { path: '.' } }], usage: { input: 1000, output: 10 } },
        { text: 'Listed it.', usage: { input: 1200, output: 20 } },
      ],
    });
    const { session, home, workspace } = current;
    await session.waitFor('Type a message');
    await session.type('list the folder');
    session.write('\r');
    await session.waitFor('Listed it.');
    const live = await session.waitIdle();
    expect(live).toContain('CTX 12%');
    session.write('\x03\x03');
    await session.exited;
    const id = /crystal --resume (\S+)/.exec(session.output)?.[1] as string;
    const { PtySession } = await import('./pty-harness.js');
    const again = PtySession.start({ home: home.path, cwd: workspace, args: ['--resume', id] });
    try {
      const resumed = await again.waitFor('Listed it.');
      expect(resumed).toContain('CTX 12%');
      expect(resumed).not.toContain('CTX 22%');
    } finally {
      again.kill();
      await again.exited;
    }
  });
});
