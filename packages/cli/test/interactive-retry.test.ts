import { afterEach, describe, expect, it } from 'vitest';
import { type Scenario, scenario } from './pty-harness.js';

let current: Scenario | undefined;
afterEach(async () => {
  await current?.dispose();
  current = undefined;
});

describe('retries and the progress row', () => {
  it('RETRY-4 TUI-4 a 429 with retry-after-ms 2500 counts Retrying In 2s (Attempt 1) down, with the operator message', async () => {
    current = await scenario({
      replies: [
        { error: { status: 429, headers: { 'retry-after-ms': '2500' }, message: 'Slow down please' } },
        { text: 'Made it.' },
      ],
    });
    const { session } = current;
    await session.waitFor('Type a message');
    await session.type('go');
    session.write('\r');
    const first = await session.waitFor(/Retrying In 2s \(Attempt 1\) · \d/);
    expect(first).toMatch(/retrying model request: .*Slow down please|retrying model request: Too Many Requests/);
    await session.waitFor(/Retrying In 1s \(Attempt 1\) · \d/);
    await session.waitFor('Made it.');
    const done = await session.waitIdle();
    expect(done).not.toMatch(/Retrying In/);
  });

  it('RETRY-5 the text streamed by a failed attempt disappears before the retry', async () => {
    current = await scenario({
      config: { retry: { baseDelaySeconds: 1, jitter: 0 } },
      replies: [
        { text: 'partial words that will vanish soon enough', dropAfter: 4, delayMs: 200 },
        { text: 'The clean answer.' },
      ],
    });
    const { session } = current;
    await session.waitFor('Type a message');
    await session.type('go');
    session.write('\r');
    await session.waitFor('partial');
    await session.waitFor(/Retrying In 1s \(Attempt 1\)/);
    const retrying = await session.waitForGone('partial');
    expect(retrying).toContain('retrying model request');
    const done = await session.waitFor('The clean answer.');
    expect(done).not.toContain('partial');
  });

  it('TUI-4 captions Waiting For Model, Thinking and Writing carry a spinner and elapsed time that keep advancing', async () => {
    current = await scenario({
      replies: [
        {
          reasoning: ['weighing ', 'options ', 'carefully ', 'now '],
          text: ['Here ', 'it ', 'comes ', 'slowly ', 'indeed.'],
          delayMs: 350,
        },
      ],
    });
    const { session } = current;
    await session.waitFor('Type a message');
    await session.type('think hard');
    session.write('\r');
    const waiting = await session.waitFor(/(\S) Waiting For Model · 0s/);
    const spin = /(\S) Waiting For Model · 0s/.exec(waiting)?.[1];
    await session.waitFor((s) => {
      const m = /(\S) Waiting For Model · 0s/.exec(s);
      return m !== null && m[1] !== spin;
    });
    await session.waitFor(/Thinking · \d+s/);
    await session.waitFor(/Thinking · [1-9]s/);
    await session.waitFor(/Writing · \d+s/);
    await session.waitFor('Here it comes slowly indeed.');
    const idle = await session.waitIdle();
    expect(idle).not.toMatch(/Writing · /);
  });

  it('TUI-4 COMPACT-5 /compact shows Compacting while the frame keeps painting', async () => {
    current = await scenario({
      replies: [{ text: 'one' }, { text: 'two' }, { text: 'three' }, { text: 'Summary of the earlier turns.', delayMs: 400 }],
    });
    const { session } = current;
    await session.waitFor('Type a message');
    for (const word of ['first', 'second', 'third']) {
      await session.type(word);
      session.write('\r');
      await session.waitFor(word === 'first' ? 'one' : word === 'second' ? 'two' : 'three');
      await session.waitIdle();
    }
    await session.type('/compact');
    session.write('\r');
    const first = await session.waitFor(/(\S) Compacting · \d/);
    const spin = /(\S) Compacting · \d/.exec(first)?.[1];
    // COMPACT-5: the spinner keeps turning and the composer keeps working during compaction.
    await session.waitFor((s) => {
      const m = /(\S) Compacting · \d/.exec(s);
      return m !== null && m[1] !== spin;
    });
    await session.type('typed meanwhile');
    await session.waitFor('Work › typed meanwhile');
    await session.waitIdle();
  });
});
