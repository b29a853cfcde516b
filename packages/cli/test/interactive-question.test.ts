import { afterEach, describe, expect, it } from 'vitest';
import { type Scenario, scenario } from './pty-harness.js';

let current: Scenario | undefined;
afterEach(async () => {
  await current?.dispose();
  current = undefined;
});

const ask = (questions: unknown[]) => ({ toolCalls: [{ id: 'call_q', name: 'question', arguments: { questions } }] });

describe('the question overlay', () => {
  it('TUI-1 a single single-select question shows its options and Enter answers at once', async () => {
    current = await scenario({
      replies: [
        ask([
          {
            header: 'Database',
            question: 'Which database should the service use?',
            options: [
              { label: 'Postgres', description: 'relational, the default' },
              { label: 'SQLite', description: 'a single file' },
            ],
          },
        ]),
        { text: 'Going with SQLite.' },
      ],
    });
    const { session, fake } = current;
    await session.waitFor('Type a message');
    await session.type('set up storage');
    session.write('\r');
    // The overlay's own row: the question's text shows first on the call's card in the
    // transcript, a frame before the overlay (a busy machine once caught that frame).
    const overlay = await session.waitFor('› 1. Postgres  relational, the default');
    expect(overlay).toContain('Which database should the service use?');
    expect(overlay).toContain('2. SQLite');
    expect(overlay).toMatch(/Waiting For Answer · \d/);
    session.write('\x1b[B');
    await session.waitFor('› 2. SQLite');
    session.write('\r');
    await session.waitFor('Going with SQLite.');
    expect(JSON.stringify(fake.requests[1]?.body)).toContain('SQLite');
  });

  it('TUI-1 Escape dismisses the question and the model is told', async () => {
    current = await scenario({
      replies: [ask([{ header: 'Name', question: 'What name?', options: [{ label: 'alpha' }] }]), { text: 'No answer then.' }],
    });
    const { session, fake } = current;
    await session.waitFor('Type a message');
    await session.type('name it');
    session.write('\r');
    // The overlay's header: Escape sent while only the call's card shows would stop the turn instead.
    await session.waitFor('Question · Name');
    session.write('\x1b');
    await session.waitFor('No answer then.');
    expect(session.screen()).not.toContain('╭─ Question');
    expect(session.screen()).toContain('The user dismissed the question.');
    expect(fake.requests).toHaveLength(2);
  });
});

describe('the question overlay as used every day', () => {
  it('TUI-1 issue-15 the header shows, rows line up, a single choice offers no Space toggle, typing on the own-answer row is kept, and the answer is shown after', async () => {
    current = await scenario({
      replies: [
        ask([
          {
            header: 'Database',
            question: 'Which database should the service use?',
            options: [
              { label: 'Postgres', description: 'relational, the default' },
              { label: 'SQLite', description: 'a single file' },
            ],
          },
        ]),
        { text: 'Using your choice.' },
      ],
    });
    const { session, fake } = current;
    await session.waitFor('Type a message');
    await session.type('set up storage');
    session.write('\r');
    // The overlay's header, not the question text: the call's card can show that text a frame earlier.
    const overlay = await session.waitFor('Question · Database');
    expect(overlay).toContain('Which database should the service use?');
    expect(overlay).not.toContain('Space toggle');
    const lines = session.lines();
    const col = (text: string): number => (lines.find((l) => l.includes(text)) ?? '').indexOf(text);
    expect(col('relational, the default')).toBe(col('a single file'));
    expect(col('1. Postgres')).toBe(col('2. SQLite'));
    expect(col('2. SQLite')).toBe(col('3. Type your own answer'));
    session.write('\x1b[B\x1b[B');
    await session.waitFor('› 3. Type your own answer');
    // Typing on the row goes into the answer at once, not only after Enter.
    await session.type('DuckDB');
    await session.waitFor('3. Type your own answer: DuckDB▏');
    session.write('\r');
    await session.waitFor('Using your choice.');
    expect(JSON.stringify(fake.requests[1]?.body)).toContain('DuckDB');
    // The chosen answer stays visible under the question card.
    expect(session.screen()).toContain('Answered: DuckDB');
  });
});
