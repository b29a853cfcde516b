import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Scenario, scenario } from './pty-harness.js';

let current: Scenario | undefined;
afterEach(async () => {
  await current?.dispose();
  current = undefined;
});

const FILE = [
  'function main() {',
  '  const a = 1;',
  '  const b = 2;',
  '  if (a < b) {',
  '    console.log("small");',
  '  }',
  '  return a + b;',
  '}',
  '',
].join('\n');

const toolRequest = (fake: Scenario['fake'], index: number): string => JSON.stringify(fake.requests[index]?.body);

describe('real diffs in approvals and tool cards', () => {
  it('TUIX-10 an edit approval and its card show unified hunks numbered from the file, indentation kept', async () => {
    current = await scenario({
      replies: [
        {
          toolCalls: [
            {
              id: 'call_edit',
              name: 'edit',
              arguments: { path: 'main.js', old_string: '    console.log("small");', new_string: '    console.log("smaller");' },
            },
          ],
        },
        { text: 'Edited it.' },
      ],
    });
    const { session, workspace } = current;
    writeFileSync(join(workspace, 'main.js'), FILE);
    await session.waitFor('Type a message');
    await session.type('make it smaller');
    session.write('\r');
    const card = await session.waitFor('Approve Edit?');
    expect(card).toContain('@@ -2,7 +2,7 @@');
    expect(card).toContain('  4 │   if (a < b) {');
    expect(card).toContain('- 5 │     console.log("small");');
    expect(card).toContain('+ 5 │     console.log("smaller");');
    expect(card).toContain('  6 │   }');
    session.write('y');
    const done = await session.waitFor('Edited it.');
    expect(readFileSync(join(workspace, 'main.js'), 'utf8')).toContain('"smaller"');
    // The tool card keeps the same numbered hunk after the call ran.
    expect(done).toMatch(/│ - 5 │ {5}console\.log\("small"\);/);
    expect(done).toMatch(/│ \+ 5 │ {5}console\.log\("smaller"\);/);
  });

  it('TUIX-10 a write of a new file numbers its lines and shows no stray + for the final newline', async () => {
    current = await scenario({
      args: ['--approval', 'full'],
      replies: [
        { toolCalls: [{ id: 'call_write', name: 'write', arguments: { path: 'two.txt', contents: 'alpha\n\tbeta\n' } }] },
        { text: 'Wrote it.' },
      ],
    });
    const { session } = current;
    await session.waitFor('Type a message');
    await session.type('write two lines');
    session.write('\r');
    const screen = await session.waitFor('Wrote it.');
    expect(screen).toContain('+ 1 │ alpha');
    expect(screen).toContain('+ 2 │     beta');
    expect(screen).not.toMatch(/\+ 3 │/);
    expect(screen).not.toMatch(/│ \+\s*$/m);
  });
});

describe('deny with feedback', () => {
  it('TUIX-12 the card says what Session and Always cover, and a denial with feedback reaches the model in the tool result', async () => {
    current = await scenario({
      replies: [
        {
          toolCalls: [
            {
              id: 'call_edit',
              name: 'edit',
              arguments: { path: 'main.js', old_string: 'return a + b;', new_string: 'return 0;' },
            },
          ],
        },
        { text: 'Understood, I will not touch it.' },
      ],
    });
    const { session, workspace, fake } = current;
    writeFileSync(join(workspace, 'main.js'), FILE);
    await session.waitFor('Type a message');
    await session.type('change the return');
    session.write('\r');
    const card = await session.waitFor('Approve Edit?');
    expect(card).toContain('Session and Always allow edit on main.js (that path only) in this workspace');
    expect(card).toContain('[F] No, and tell the model what to do instead');
    session.write('f');
    await session.waitFor('Tell the model what to do instead:');
    await session.type('keep the sum, add a comment instead');
    session.write('\r');
    await session.waitFor('Understood, I will not touch it.');
    expect(readFileSync(join(workspace, 'main.js'), 'utf8')).toBe(FILE);
    const sent = toolRequest(fake, 1);
    expect(sent).toContain('The user declined this action and said what to do instead');
    expect(sent).toContain('keep the sum, add a comment instead');
  });

  it('TUIX-12 a bash card names the exact command Session and Always would allow', async () => {
    current = await scenario({
      replies: [{ toolCalls: [{ id: 'call_b', name: 'bash', arguments: { command: 'rm -rf build' } }] }, { text: 'ok' }],
    });
    const { session } = current;
    await session.waitFor('Type a message');
    await session.type('clean');
    session.write('\r');
    const card = await session.waitFor('Approve Bash?');
    expect(card).toContain('Session and Always allow bash running exactly `rm -rf build` in this workspace');
    session.write('n');
    await session.waitFor('ok');
  });
});

describe('tool output that expands', () => {
  it('TUIX-7 --fullscreen: a failing command shows its tail and the error with how many lines came before; Ctrl+O expands and collapses', async () => {
    const command = 'for i in $(seq 1 30); do echo "line $i"; done; sleep 0.3; echo "boom: the real error" >&2; exit 3';
    current = await scenario({
      args: ['--approval', 'full', '--fullscreen'],
      rows: 60,
      replies: [{ toolCalls: [{ id: 'call_fail', name: 'bash', arguments: { command } }] }, { text: 'It failed.' }],
    });
    const { session } = current;
    await session.waitFor('Type a message');
    await session.type('run the failing thing');
    session.write('\r');
    const screen = await session.waitFor('It failed.');
    expect(screen).toContain('│ exit 3');
    // stdout's last lines, then stderr under its own label.
    expect(screen).toMatch(
      /│ … 27 more lines above · Ctrl\+O shows all\n.*│ line 28\n.*│ line 29\n.*│ line 30\n.*│ stderr:\n.*│ boom: the real error/,
    );
    expect(screen).not.toMatch(/│ line 27$/m);
    await session.waitIdle();
    session.write('\x0f');
    const open = await session.waitFor('Ctrl+O collapses');
    expect(open).toContain('│ line 12');
    session.write('\x0f');
    const closed = await session.waitForGone('Ctrl+O collapses');
    expect(closed).toContain('… 27 more lines above');
    expect(closed).not.toContain('│ line 12');
  });
});
