import { afterEach, describe, expect, it } from 'vitest';
import { type Scenario, scenario } from './pty-harness.js';

let current: Scenario | undefined;
afterEach(async () => {
  await current?.dispose();
  current = undefined;
});

describe('terminal size', () => {
  it('TUI-1 TUIX-9 --fullscreen: below 40x10 a centred resize notice replaces the frame; keys typed meanwhile are kept', async () => {
    current = await scenario({ args: ['--fullscreen'], replies: [{ text: 'Still here after the resize.' }] });
    const { session } = current;
    await session.waitFor('Type a message');
    await session.type('hi');
    session.write('\r');
    await session.waitFor('Still here after the resize.');
    await session.type('draft');
    session.resize(36, 9);
    const notice = await session.waitFor('needs a larger');
    expect(notice).toContain('at least 40x10, now 36x9');
    expect(notice).not.toContain('Still here');
    const lines = session.lines();
    const row = lines.findIndex((l) => l.includes('needs a larger'));
    expect(row).toBeGreaterThan(1);
    expect(row).toBeLessThan(7);
    // TUIX-9: keys typed while the notice shows are kept, not dropped.
    await session.type(' kept');
    session.resize(100, 30);
    const back = await session.waitFor('Work › draft kept');
    expect(back).toContain('Still here after the resize.');
    expect(back).not.toContain('needs a larger');
    session.resize(80, 24);
    await session.waitFor(/Work │ Default/);
  });

  it('TUIX-9 at 40x10 the session is usable: the status bar, the composer and an answer fit', async () => {
    current = await scenario({ cols: 40, rows: 10, replies: [{ text: 'Small pane answer.' }] });
    const { session } = current;
    const first = await session.waitFor('Work ›');
    expect(first).not.toContain('needs a larger');
    expect(first).toMatch(/Work │/);
    await session.type('hello from a small pane');
    session.write('\r');
    const screen = await session.waitFor('Small pane answer.');
    expect(screen).toContain('▌ hello from a small pane');
    for (const line of session.lines()) expect(line.length).toBeLessThanOrEqual(40);
  });
});

describe('the first screen', () => {
  it('TUIX-9 the first screen says where you are, with which model, and names useful keys', async () => {
    current = await scenario({ replies: [] });
    const { session, workspace } = current;
    const screen = await session.waitFor('Type a message');
    expect(screen).toContain('Crystal Code');
    expect(screen).toContain(`Working in ${workspace} with fake/fake-model, Work mode.`);
    expect(screen).toContain('@ attaches a file · Shift+Tab switches Plan/Work · Esc interrupts · ? lists every key and command');
  });
});
