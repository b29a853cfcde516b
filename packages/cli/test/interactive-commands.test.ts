import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { tempDir } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type Scenario, scenario, userTexts } from './pty-harness.js';

let current: Scenario | undefined;
afterEach(async () => {
  await current?.dispose();
  current = undefined;
});

function put(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

describe('custom commands in the terminal (CMD-1)', () => {
  it('CMD-1 a .claude/commands file is in the slash picker and /help, and Enter sends its expanded text', async () => {
    const workspace = tempDir('crystal-ws-cmd-');
    put(
      join(workspace, '.claude', 'commands', 'review.md'),
      '---\ndescription: Review a file for bugs\nargument-hint: [file]\n---\nReview $ARGUMENTS for correctness.\n',
    );
    current = await scenario({ replies: [{ text: 'Reviewed it.' }], workspace });
    const { session, fake } = current;
    await session.waitFor('Type a message');
    await session.type('/rev');
    await session.waitFor('Review a file for bugs');
    session.write('\x15');
    await session.type('/help');
    session.write('\r');
    const help = await session.waitFor('Commands:');
    expect(help).toMatch(/\/review \[file\]\s+Review a file for bugs/);
    await session.type('/review src/app.ts');
    session.write('\r');
    await session.waitFor('Reviewed it.');
    expect(userTexts(fake).at(-1)?.at(-1)).toBe('Review src/app.ts for correctness.');
  });
});
