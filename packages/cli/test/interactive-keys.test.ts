import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
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

describe('keys a Claude Code or Codex user expects', () => {
  it('TUIX-1 Esc interrupts a running turn and the queued follow-up is kept and sent', async () => {
    current = await scenario({ args: ['--approval', 'full'], replies: [slowBash(20), { text: 'Answering the kept text.' }] });
    const { session, fake } = current;
    await session.waitFor('Type a message');
    await session.type('start something long');
    session.write('\r');
    await session.waitFor(/Running Command · \d/);
    await session.type('keep me');
    session.write('\r');
    await session.waitFor('Queued (1)');
    session.write('\x1b');
    await session.waitFor('Interrupted.');
    await session.waitFor('Answering the kept text.');
    expect(userTexts(fake).at(-1)?.at(-1)).toBe('keep me');
  });

  it('TUIX-1 Esc at an idle prompt clears the composer and in an overlay closes it', async () => {
    current = await scenario({ replies: [] });
    const { session } = current;
    await session.waitFor('Type a message');
    await session.type('a draft to throw away');
    await session.waitFor('Work › a draft to throw away');
    session.write('\x1b');
    await session.waitFor('Type a message, / for commands');
    // The slash picker is an overlay: Esc closes it and keeps the text.
    await session.type('/he');
    await session.waitFor('Shortcuts and commands.');
    session.write('\x1b');
    const closed = await session.waitForGone('Shortcuts and commands.');
    expect(closed).toContain('Work › /he');
  });

  it('TUIX-1 Esc Esc on an empty composer with checkpoints off opens the earlier messages; the pick is put back to edit and resend', async () => {
    // With checkpoints on, Esc Esc opens the rewind picker instead (interactive-rewind.test.ts).
    current = await scenario({
      replies: [{ text: 'First answer.' }, { text: 'Second answer.' }, { text: 'Edited answer.' }],
      config: { checkpoints: { enabled: false } },
    });
    const { session, fake } = current;
    await session.waitFor('Type a message');
    await session.type('alpha question');
    session.write('\r');
    await session.waitFor('First answer.');
    await session.waitIdle();
    await session.type('beta question');
    session.write('\r');
    await session.waitFor('Second answer.');
    await session.waitIdle();
    session.write('\x1b');
    session.write('\x1b');
    const picker = await session.waitFor('Edit an earlier message');
    expect(picker).toContain('› beta question');
    expect(picker).toContain('alpha question');
    // Searchable: typing filters the list.
    await session.type('alp');
    await session.waitFor('› alpha question');
    session.write('\r');
    await session.waitFor('Work › alpha question');
    await session.type(' again');
    session.write('\r');
    await session.waitFor('Edited answer.');
    expect(userTexts(fake).at(-1)?.at(-1)).toBe('alpha question again');
  });

  it('TUIX-2 Tab on an @ word never changes the mode; Shift+Tab cycles Plan and Work', async () => {
    current = await scenario({ replies: [] });
    const { session, workspace } = current;
    writeFileSync(join(workspace, 'hello.txt'), 'hi\n');
    await session.waitFor('Type a message');
    await session.type('look at @hel');
    session.write('\t');
    await session.waitFor('Work › look at @hello.txt');
    expect(session.screen()).toMatch(/Work │ Default/);
    session.write('\t');
    await new Promise((r) => setTimeout(r, 200));
    expect(session.screen()).toMatch(/Work │ Default/);
    session.write('\x1b[Z');
    await session.waitFor(/Plan │ Default/);
    expect(session.screen()).toContain('Plan › look at @hello.txt');
    session.write('\x1b[Z');
    await session.waitFor(/Work │ Default/);
  });

  it('TUIX-3 /help writes the exact Esc, Ctrl+C, Enter and empty Enter table and lists every key and command', async () => {
    current = await scenario({ replies: [], rows: 60, cols: 160 });
    const { session } = current;
    await session.waitFor('Type a message');
    await session.type('/help');
    session.write('\r');
    const screen = await session.waitFor('Commands:');
    const row = (key: string): string => session.lines().find((l) => l.startsWith(`│ ${key} `)) ?? '';
    expect(row('Esc')).toContain('During a turn: interrupts it; queued text stays. At an idle prompt: clears the composer.');
    expect(screen).toContain('In an overlay or picker: closes it. Twice on an empty composer: pick an earlier message');
    expect(row('Ctrl+C')).toContain('During a turn: interrupts it; queued text stays. At an idle prompt: clears the composer.');
    expect(screen).toContain('Twice on an empty composer: exits');
    expect(row('Enter')).toContain('At an idle prompt: sends the text. During a turn: queues it as a follow-up');
    expect(row('empty Enter')).toContain(
      'With follow-ups queued: interrupts the turn so the queue goes now. With nothing queued: does nothing.',
    );
    for (const key of ['Ctrl+V', 'PageUp/PageDown', 'Shift+Tab', 'Ctrl+O', 'Tab', 'Ctrl+J', '@path', '!command'])
      expect(row(key), key).not.toBe('');
    for (const command of ['/help', '/status', '/model', '/resume', '/clear', '/fork', '/btw', '/quit', '/stats'])
      expect(screen).toContain(command);
  });
});
