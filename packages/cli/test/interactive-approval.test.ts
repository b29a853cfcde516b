import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Scenario, scenario } from './pty-harness.js';

let current: Scenario | undefined;
afterEach(async () => {
  await current?.dispose();
  current = undefined;
});

const writeCall = {
  id: 'call_write',
  name: 'write',
  arguments: { path: 'notes/hello.txt', contents: 'first line\nsecond line\n' },
};

describe('approval cards in the terminal', () => {
  it('APPR-2 APPR-3 TUI-2 Y approves a write once: the card shows risk, authority and the diff, and the file is written', async () => {
    current = await scenario({ replies: [{ toolCalls: [writeCall] }, { text: 'The file is written.' }] });
    const { session, workspace } = current;
    await session.waitFor('Type a message');
    await session.type('write the notes');
    session.write('\r');
    // The progress row is painted below the card: once it says Awaiting Approval, the card's
    // frame has fully arrived (a screen read mid-frame could show half of it).
    const card = await session.waitFor(/Awaiting Approval · \d/);
    expect(card).toContain('Approve Write?');
    expect(card).toContain('Risk Write');
    expect(card).toContain('Authority Workspace');
    expect(card).toContain('notes/hello.txt');
    expect(card).toContain('+ 1 │ first line');
    expect(card).toMatch(/\[Y\] Once\s+\[S\] Session\s+\[A\] Always\s+\[N\] Deny/);
    expect(card).toMatch(/Awaiting Approval · \d/);
    session.write('y');
    await session.waitFor('The file is written.');
    const screen = await session.waitIdle();
    expect(screen).not.toContain('Approve Write?');
    // The tool card: Title Case name, one-line summary, capped diff.
    expect(screen).toMatch(/● Write notes\/hello\.txt/);
    expect(screen).toContain('│ + 2 │ second line');
    expect(readFileSync(join(workspace, 'notes/hello.txt'), 'utf8')).toBe('first line\nsecond line\n');
  });

  it('APPR-2 N denies: no file, the card reads Denied, and the model gets the refusal', async () => {
    current = await scenario({ replies: [{ toolCalls: [writeCall] }, { text: 'Understood, not writing.' }] });
    const { session, workspace, fake } = current;
    await session.waitFor('Type a message');
    await session.type('write the notes');
    session.write('\r');
    await session.waitFor('Approve Write?');
    session.write('n');
    await session.waitFor('Understood, not writing.');
    const screen = await session.waitIdle();
    expect(screen).toMatch(/● Write notes\/hello\.txt\s+Denied/);
    expect(existsSync(join(workspace, 'notes/hello.txt'))).toBe(false);
    expect(JSON.stringify(fake.requests[1]?.body)).toMatch(/denied|refused|rejected/i);
  });

  it('APPR-2 Enter approves once and Escape denies', async () => {
    const second = { id: 'call_two', name: 'write', arguments: { path: 'b.txt', contents: 'b' } };
    current = await scenario({
      replies: [
        { toolCalls: [{ ...writeCall, arguments: { path: 'a.txt', contents: 'a' } }] },
        { toolCalls: [second] },
        { text: 'Both asked.' },
      ],
    });
    const { session, workspace } = current;
    await session.waitFor('Type a message');
    await session.type('two files');
    session.write('\r');
    await session.waitFor('a.txt');
    await session.waitFor('Approve Write?');
    session.write('\r');
    await session.waitFor(/Approve Write\?[\s\S]*b\.txt/);
    session.write('\x1b');
    await session.waitFor('Both asked.');
    expect(existsSync(join(workspace, 'a.txt'))).toBe(true);
    expect(existsSync(join(workspace, 'b.txt'))).toBe(false);
  });
});
