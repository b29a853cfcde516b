import { afterEach, describe, expect, it } from 'vitest';
import { type Scenario, scenario } from './pty-harness.js';

let current: Scenario | undefined;
afterEach(async () => {
  await current?.dispose();
  current = undefined;
});

const STATUS = /Work │ Default │ fake\/fake-model/;

describe('the /btw side panel', () => {
  it('BTW-7 BTW-8 BTW-9 the answer shows in a panel above the composer after Waiting for the model; Esc closes it', async () => {
    current = await scenario({
      replies: [{ text: 'The main answer.' }, { text: 'It was about testing.', delayMs: 400 }],
    });
    const { session } = current;
    await session.waitFor('Type a message');
    await session.type('hello');
    session.write('\r');
    await session.waitFor('The main answer.');
    await session.waitIdle();
    await session.type('/btw what was this about?');
    session.write('\r');
    // BTW-8: the caption with the progress spinner, and the frame keeps advancing.
    const waiting = await session.waitFor(/│ (\S) Waiting for the model/);
    const spinner = /│ (\S) Waiting for the model/.exec(waiting)?.[1];
    await session.waitFor((s) => {
      const now = /│ (\S) Waiting for the model/.exec(s)?.[1];
      return now !== undefined && now !== spinner;
    });
    const answered = await session.waitFor('It was about testing.');
    // BTW-7: status bar, transcript and composer stay; the panel sits above the composer.
    expect(answered).toMatch(STATUS);
    expect(answered).toContain('The main answer.');
    expect(answered).toContain('btw: what was this about?');
    const lines = session.lines();
    const panel = lines.findIndex((l) => l.includes('It was about testing.'));
    const status = lines.findIndex((l) => STATUS.test(l));
    expect(panel).toBeLessThan(status);
    session.write('\x1b');
    const closed = await session.waitForGone('It was about testing.');
    expect(closed).toContain('The main answer.');
    // BTW-6: the side exchange never entered the transcript.
    expect(closed).not.toContain('what was this about');
  });

  it('BTW-8 the panel shows Thinking once reasoning starts', async () => {
    current = await scenario({
      replies: [{ reasoning: ['let me ', 'think ', 'about ', 'it ', 'slowly '], text: 'Side answer.', delayMs: 250 }],
    });
    const { session } = current;
    await session.waitFor('Type a message');
    await session.type('/btw why?');
    session.write('\r');
    await session.waitFor(/│ \S Thinking/);
    await session.waitFor('Side answer.');
  });

  it('BTW-9 Left and Right step through earlier answers, i inserts the shown answer, x clears the thread', async () => {
    current = await scenario({ replies: [{ text: 'Answer number one.' }, { text: 'Answer number two.' }] });
    const { session } = current;
    await session.waitFor('Type a message');
    await session.type('/btw first?');
    session.write('\r');
    await session.waitFor('Answer number one.');
    session.write(' ');
    await session.waitForGone('Answer number one.');
    await session.type('/btw second?');
    session.write('\r');
    await session.waitFor('Answer number two.');
    expect(session.screen()).toContain('2/2');
    session.write('\x1b[D');
    await session.waitFor(/btw: first\?.*1\/2/);
    expect(session.screen()).toContain('Answer number one.');
    session.write('\x1b[C');
    await session.waitFor('Answer number two.');
    // Beyond the peers: i puts the shown answer into the composer as plain, editable text.
    session.write('i');
    await session.waitFor('Work › Answer number two.');
    expect(session.screen()).not.toContain('btw: second?');
    session.write('\x1b');
    await session.waitFor('Type a message');
    await session.type('/btw');
    session.write('\r');
    await session.waitFor('Answer number two.');
    session.write('x');
    await session.waitForGone('Answer number two.');
    await session.type('/btw');
    session.write('\r');
    await session.waitFor('No side questions yet.');
  });

  it('BTW-10 Ctrl+C with the panel open cancels the side question and closes it; the main turn keeps running', async () => {
    current = await scenario({
      args: ['--approval', 'full'],
      replies: [
        { toolCalls: [{ id: 'call_sleep', name: 'bash', arguments: { command: 'sleep 1.5; echo main-slept' } }] },
        { text: 'This side answer is far too slow to arrive.', delayMs: 400 },
        { text: 'The main turn finished.' },
      ],
    });
    const { session } = current;
    await session.waitFor('Type a message');
    await session.type('main work');
    session.write('\r');
    await session.waitFor(/Running Command · \d/);
    await session.type('/btw quick?');
    session.write('\r');
    await session.waitFor('Waiting for the model');
    session.write('\x03');
    const closed = await session.waitForGone('btw: quick?');
    expect(closed).toMatch(/Running Command · \d/);
    expect(closed).not.toContain('Interrupted.');
    await session.waitFor('The main turn finished.');
    expect(session.screen()).not.toContain('far too slow');
  });
});
