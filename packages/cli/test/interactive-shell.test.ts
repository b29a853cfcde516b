import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Scenario, scenario, userTexts } from './pty-harness.js';

let current: Scenario | undefined;
afterEach(async () => {
  await current?.dispose();
  current = undefined;
});

describe('!command at the prompt', () => {
  it('TUIX-4 !cmd goes through the bash approval, shows its output in a card, and the model sees it with the next message', async () => {
    current = await scenario({ replies: [{ text: 'I see the greeting.' }] });
    const { session, fake, workspace } = current;
    await session.waitFor('Type a message');
    await session.type('!echo hello from the shell > greeting.txt; cat greeting.txt');
    await session.waitFor('Shell › !echo hello');
    session.write('\r');
    // The same approval card the model's bash calls get.
    const card = await session.waitFor('Approve Bash?');
    expect(card).toContain('echo hello from the shell > greeting.txt; cat greeting.txt');
    session.write('y');
    const ran = await session.waitFor('│ hello from the shell');
    expect(ran).toMatch(/● Bash echo hello from the shell/);
    expect(existsSync(join(workspace, 'greeting.txt'))).toBe(true);
    expect(fake.requests).toHaveLength(0);
    await session.waitIdle();
    await session.type('what did it print?');
    session.write('\r');
    const screen = await session.waitFor('I see the greeting.');
    expect(screen).toContain('▌ [with the output of !echo hello from the shell > greeting.txt; cat greeting.txt]');
    expect(screen).not.toContain('<user-shell');
    const sent = userTexts(fake)[0]?.at(-1) ?? '';
    expect(sent).toContain('<user-shell command="echo hello from the shell > greeting.txt; cat greeting.txt">');
    expect(sent).toContain('exit 0\nhello from the shell');
    expect(sent.endsWith('what did it print?')).toBe(true);
  });

  it('TUIX-4 TUIX-7 a failing !cmd shows the tail of stdout and, apart under its own label, the tail of stderr; the model gets both as they came', async () => {
    current = await scenario({ args: ['--approval', 'full'], rows: 50, replies: [{ text: 'Seen.' }] });
    const { session, fake } = current;
    await session.waitFor('Type a message');
    // stderr's first line comes early: in the mixed tail it would scroll out of sight.
    await session.type(
      '!echo "warning: early" >&2; for i in $(seq 1 20); do echo "out $i"; done; for i in 1 2 3 4 5; do echo "err $i" >&2; done; exit 2',
    );
    session.write('\r');
    const screen = await session.waitFor('│ stderr:');
    expect(screen).toMatch(
      /│ exit 2\n.*│ … 17 more lines above · Ctrl\+O shows all\n.*│ out 18\n.*│ out 19\n.*│ out 20\n.*│ stderr:\n.*│ … 2 more lines above · Ctrl\+O shows all\n.*│ err 2\n.*│ err 3\n.*│ err 4\n.*│ err 5$/m,
    );
    await session.waitIdle();
    await session.type('and?');
    session.write('\r');
    await session.waitFor('Seen.');
    const sent = userTexts(fake)[0]?.at(-1) ?? '';
    expect(sent).toContain('warning: early');
    expect(sent).toContain('out 20');
    expect(sent).toContain('err 5');
  });

  it('TUIX-4 a denied !cmd does not run, and Plan refuses !cmd as it refuses bash', async () => {
    current = await scenario({ replies: [] });
    const { session, workspace } = current;
    await session.waitFor('Type a message');
    await session.type('!touch made.txt');
    session.write('\r');
    await session.waitFor('Approve Bash?');
    session.write('n');
    await session.waitFor(/Bash touch made\.txt\s+Denied/);
    expect(existsSync(join(workspace, 'made.txt'))).toBe(false);
    await session.waitIdle();
    session.write('\x1b[Z');
    await session.waitFor(/Plan │/);
    await session.type('!touch made.txt');
    session.write('\r');
    await session.waitFor('!commands run bash, which Plan does not allow; press Shift+Tab for Work.');
    expect(existsSync(join(workspace, 'made.txt'))).toBe(false);
  });
});
