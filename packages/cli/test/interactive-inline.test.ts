import { afterEach, describe, expect, it } from 'vitest';
import { type Scenario, scenario } from './pty-harness.js';

let current: Scenario | undefined;
afterEach(async () => {
  await current?.dispose();
  current = undefined;
});

const answer = (tag: string): string => Array.from({ length: 8 }, (_, i) => `${tag} line ${i + 1}`).join('\n\n');

describe('the inline view (default)', () => {
  it('TUIX-8 finished entries go to the terminal scroll-back, are never repainted, no alternate screen or mouse capture, and stay after exit', async () => {
    current = await scenario({
      rows: 14,
      cols: 80,
      replies: [{ text: answer('alpha') }, { text: answer('beta'), delayMs: 5 }],
    });
    const { session } = current;
    await session.waitFor('Type a message');
    await session.type('first question');
    session.write('\r');
    await session.waitFor('alpha line 8');
    await session.waitIdle();
    const before = session.output.length;
    await session.type('second question');
    session.write('\r');
    await session.waitFor('beta line 8');
    await session.waitIdle();
    // The scroll-back, read from the emulator: the first answer scrolled off the top whole.
    expect(session.scrolledOff).toBeGreaterThan(10);
    const buffer = session.bufferLines();
    const offscreen = buffer.slice(0, session.scrolledOff);
    for (let i = 1; i <= 8; i++) expect(offscreen).toContain(`alpha line ${i}`);
    expect(offscreen).toContain('▌ first question');
    // Each finished row exists once; the first answer was not written again during the second.
    expect(buffer.filter((l) => l === 'alpha line 3')).toHaveLength(1);
    expect(session.output.slice(before)).not.toContain('alpha line');
    // The live region is under the conversation: status bar and composer.
    const shown = session.lines().filter((l) => l.trim() !== '');
    expect(shown.at(-1)).toContain('Work › Type a message');
    expect(shown.at(-2)).toMatch(/^ Work │ Default/);
    expect(session.output).not.toContain('\x1b[?1049h');
    expect(session.output).not.toContain('\x1b[?1000h');
    session.write('\x03\x03');
    await session.exited;
    const after = session.bufferLines();
    const saved = after.findIndex((l) => l.startsWith('Session ') && l.includes('saved'));
    expect(saved).toBeGreaterThan(-1);
    expect(after.indexOf('beta line 8')).toBeLessThan(saved);
    expect(after.indexOf('alpha line 1')).toBeGreaterThan(-1);
    // The live region is gone: no status bar or composer left under the conversation.
    expect(after.slice(after.indexOf('beta line 8'))).not.toContainEqual(expect.stringContaining('Work › '));
  });

  it('TUIX-8 a long streamed reply shows its live tail, then lands in the scroll-back whole', async () => {
    const long = Array.from({ length: 40 }, (_, i) => `row ${i + 1}`).join('\n\n');
    current = await scenario({ rows: 12, cols: 60, replies: [{ text: long, delayMs: 2 }] });
    const { session } = current;
    await session.waitFor('Type a message');
    await session.type('long one');
    session.write('\r');
    await session.waitFor('row 40');
    await session.waitIdle();
    const buffer = session.bufferLines();
    for (let i = 1; i <= 40; i++) expect(buffer.filter((l) => l === `row ${i}`)).toHaveLength(1);
    expect(buffer.indexOf('row 1')).toBeLessThan(buffer.indexOf('row 40'));
  });
});

describe('the inline view and resizing', () => {
  it('TUIX-8 TUIX-9 after a resize the live region is painted once, under the conversation, and the draft is kept', async () => {
    current = await scenario({ rows: 16, cols: 90, replies: [{ text: 'Before the resize.' }] });
    const { session } = current;
    await session.waitFor('Type a message');
    await session.type('hello');
    session.write('\r');
    await session.waitFor('Before the resize.');
    await session.waitIdle();
    await session.type('draft text');
    session.resize(60, 16);
    const lastRow = (s: string): string =>
      s
        .split('\n')
        .filter((l) => l.trim() !== '')
        .at(-1) ?? '';
    await session.waitFor(
      (s) => lastRow(s) === 'Work › draft text' && s.split('\n').filter((l) => l.startsWith(' Work │')).length === 1,
    );
    session.resize(100, 20);
    const screen = await session.waitFor((s) => lastRow(s) === 'Work › draft text');
    expect(screen.split('\n').filter((l) => l.startsWith(' Work │'))).toHaveLength(1);
    expect(session.bufferLines().filter((l) => l === 'Before the resize.')).toHaveLength(1);
  });
});
