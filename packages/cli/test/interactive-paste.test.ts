import { afterEach, describe, expect, it } from 'vitest';
import { type Scenario, scenario, userTexts } from './pty-harness.js';

let current: Scenario | undefined;
afterEach(async () => {
  await current?.dispose();
  current = undefined;
});

const paste = (text: string): string => `\x1b[200~${text}\x1b[201~`;
const lines = Array.from({ length: 30 }, (_, i) => `log line ${i + 1}: value=${i * 7}`).join('\n');

describe('large pastes', () => {
  it('TUIX-6 a 30-line paste collapses to one [Pasted text #1 +30 lines] span and the full text is sent', async () => {
    current = await scenario({ replies: [{ text: 'Read all thirty.' }] });
    const { session, fake } = current;
    await session.waitFor('Type a message');
    await session.type('what is wrong here: ');
    session.write(paste(lines));
    const shown = await session.waitFor('Work › what is wrong here: [Pasted text #1 +30 lines]');
    expect(shown).not.toContain('log line 2:');
    await session.type(' thanks');
    session.write('\r');
    await session.waitFor('Read all thirty.');
    expect(userTexts(fake)[0]?.at(-1)).toBe(`what is wrong here: ${lines} thanks`);
  });

  it('TUIX-6 the span is atomic: one Backspace removes all of it, and the cursor steps over it whole', async () => {
    current = await scenario({ replies: [{ text: 'Only the short text.' }] });
    const { session, fake } = current;
    await session.waitFor('Type a message');
    await session.type('ab');
    session.write(paste(lines));
    await session.waitFor('Work › ab[Pasted text #1 +30 lines]');
    // Left steps over the whole span; typing lands before it.
    session.write('\x1b[D');
    await session.type('X');
    await session.waitFor('Work › abX[Pasted text #1 +30 lines]');
    session.write('\x1b[C');
    session.write('\x7f');
    const after = await session.waitForGone('[Pasted text #1');
    expect(after).toContain('Work › abX');
    // A second paste gets the next number; a short one stays plain text.
    session.write(paste('one\ntwo'));
    await session.waitFor(/Work › abXone\n\s+two/);
    session.write('\r');
    await session.waitFor('Only the short text.');
    expect(userTexts(fake)[0]?.at(-1)).toBe('abXone\ntwo');
  });
});
