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

describe('reports that say what their numbers are', () => {
  it('TUI-5 issue-15 /stats says what its percentages are of, and /sessions counts one message in the singular', async () => {
    current = await scenario({
      args: ['--approval', 'full'],
      replies: [
        { toolCalls: [{ id: 'call_list', name: 'list', arguments: { path: '.' } }] },
        { text: 'Listed.' },
        { error: { status: 400, message: 'bad request on purpose' } },
      ],
      rows: 50,
    });
    const { session } = current;
    await session.waitFor('Type a message');
    await session.type('list it');
    session.write('\r');
    await session.waitFor('Listed.');
    await session.waitIdle();
    await session.type('/stats');
    session.write('\r');
    const stats = await session.waitFor('Tools (1 call; the share of each)');
    expect(stats).toMatch(/list\s+1 call\s+100% of tool calls/);
    expect(stats).not.toMatch(/\d%\s*$/m);
    // A session whose only message is the user's (the request failed): "1 message".
    await session.type('/clear');
    session.write('\r');
    await session.waitFor(/New conversation \d/);
    await session.type('this one fails');
    session.write('\r');
    await session.waitFor('bad request on purpose');
    await session.waitIdle();
    await session.type('/sessions');
    session.write('\r');
    const listed = await session.waitFor(/│ \* \S+ .* messages? /);
    expect(listed).toMatch(/\* \S+\s+\S+ \S+\s+1 message {2}this one fails/);
    expect(listed).not.toContain('1 messages');
  });
});

describe('the queue caption', () => {
  it('QUEUE-2 QUEUE-3 issue-15 while the model streams with no tool batch the caption does not talk of one', async () => {
    current = await scenario({
      replies: [{ text: 'word '.repeat(40), delayMs: 40 }, { text: 'Queued one answered.' }],
    });
    const { session } = current;
    await session.waitFor('Type a message');
    await session.type('stream slowly');
    session.write('\r');
    await session.waitFor(/Writing · \d/);
    await session.type('next please');
    session.write('\r');
    const screen = await session.waitFor('Queued (1)');
    expect(screen).toContain("Queued (1) · sent when the model's current step ends · empty Enter sends now");
    expect(screen).not.toContain('tool batch');
    await session.waitFor('Queued one answered.');
  });
});
