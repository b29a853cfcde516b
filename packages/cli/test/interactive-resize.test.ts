import { afterEach, describe, expect, it } from 'vitest';
import { type Scenario, scenario } from './pty-harness.js';

let current: Scenario | undefined;
afterEach(async () => {
  await current?.dispose();
  current = undefined;
});

describe('terminal size', () => {
  it('TUI-1 below 80x24 a centred resize notice replaces the frame, and the frame comes back on resize', async () => {
    current = await scenario({ replies: [{ text: 'Still here after the resize.' }] });
    const { session } = current;
    await session.waitFor('Type a message');
    await session.type('hi');
    session.write('\r');
    await session.waitFor('Still here after the resize.');
    await session.type('draft');
    session.resize(60, 20);
    const notice = await session.waitFor('Crystal Code needs a larger window');
    expect(notice).toContain('at least 80x24, now 60x20');
    expect(notice).not.toContain('Still here');
    const lines = session.lines();
    const row = lines.findIndex((l) => l.includes('needs a larger window'));
    expect(row).toBeGreaterThan(5);
    expect(row).toBeLessThan(14);
    const col = (lines[row] as string).indexOf('Crystal Code');
    expect(col).toBeGreaterThan(5);
    // Input is ignored while the notice shows.
    await session.type('zzz');
    session.resize(100, 30);
    const back = await session.waitFor('Still here after the resize.');
    expect(back).toContain('Work › draft');
    expect(back).not.toContain('zzz');
    expect(back).not.toContain('needs a larger window');
    session.resize(80, 24);
    await session.waitFor(/Work │ Default/);
  });
});
