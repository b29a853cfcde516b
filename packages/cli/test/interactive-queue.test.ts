import { afterEach, describe, expect, it } from 'vitest';
import { type Scenario, scenario, userTexts } from './pty-harness.js';

let current: Scenario | undefined;
afterEach(async () => {
  await current?.dispose();
  current = undefined;
});

const slowBash = (seconds: number) => ({
  toolCalls: [{ id: 'call_sleep', name: 'bash', arguments: { command: `sleep ${seconds}; echo slept` } }],
});

describe('the follow-up queue in the terminal', () => {
  it('QUEUE-1 QUEUE-2 QUEUE-3 TUI-3 a follow-up typed while busy waits in the Queued panel and goes after the tool batch', async () => {
    current = await scenario({ args: ['--approval', 'full'], replies: [slowBash(1.5), { text: 'Got both.' }] });
    const { session, fake } = current;
    await session.waitFor('Type a message');
    await session.type('run the slow thing');
    session.write('\r');
    await session.waitFor(/Running Command · \d/);
    // QUEUE-1: the composer stays open; QUEUE-2: Enter queues.
    await session.type('and then summarise');
    session.write('\r');
    const queued = await session.waitFor('Queued (1)');
    expect(queued).toContain('1. and then summarise');
    expect(queued).toContain('1 Queued');
    await session.waitFor('Got both.');
    const screen = await session.waitIdle();
    expect(screen).not.toContain('Queued (1)');
    expect(screen).toContain('▌ and then summarise');
    // QUEUE-3: it went with the request right after the tool batch, in the same turn.
    expect(fake.requests).toHaveLength(2);
    expect(userTexts(fake)[1]).toEqual(['run the slow thing', 'and then summarise']);
  });

  it('QUEUE-12 Ctrl+C interrupts the turn without dropping queued text', async () => {
    current = await scenario({ args: ['--approval', 'full'], replies: [slowBash(20), { text: 'Answering the kept text.' }] });
    const { session, fake } = current;
    await session.waitFor('Type a message');
    await session.type('start something long');
    session.write('\r');
    await session.waitFor(/Running Command · \d/);
    await session.type('keep me');
    session.write('\r');
    await session.waitFor('Queued (1)');
    session.write('\x03');
    await session.waitFor('Interrupted.');
    await session.waitFor('Answering the kept text.');
    expect(session.screen()).toContain('▌ keep me');
    expect(userTexts(fake).at(-1)?.at(-1)).toBe('keep me');
  });

  it('QUEUE-4 QUEUE-5 empty Enter does nothing with an empty queue, and sends a queued follow-up at once', async () => {
    current = await scenario({ args: ['--approval', 'full'], replies: [slowBash(20), { text: 'Sent right away.' }] });
    const { session, fake } = current;
    await session.waitFor('Type a message');
    await session.type('long job');
    session.write('\r');
    await session.waitFor(/Running Command · \d/);
    // QUEUE-5: nothing queued, the turn keeps running.
    session.write('\r');
    await new Promise((r) => setTimeout(r, 300));
    expect(session.screen()).toMatch(/Running Command · \d/);
    expect(fake.requests).toHaveLength(1);
    await session.type('now please');
    session.write('\r');
    await session.waitFor('Queued (1)');
    // QUEUE-4: empty Enter interrupts so the queue goes now.
    session.write('\r');
    await session.waitFor('Sent right away.');
    expect(userTexts(fake).at(-1)?.at(-1)).toBe('now please');
  });

  it('QUEUE-6 QUEUE-8 /clear typed while busy stops the turn, drops queued text and starts a new conversation', async () => {
    current = await scenario({ args: ['--approval', 'full'], replies: [slowBash(20)] });
    const { session } = current;
    await session.waitFor('Type a message');
    await session.type('long job');
    session.write('\r');
    await session.waitFor(/Running Command · \d/);
    await session.type('dropped follow-up');
    session.write('\r');
    await session.waitFor('Queued (1)');
    await session.type('/clear');
    session.write('\r');
    const screen = await session.waitFor(/New conversation \d/);
    expect(screen).not.toContain('dropped follow-up');
    expect(screen).not.toContain('long job');
  });
});
