/**
 * HOOK-1 in the terminal: the real binary in a pty read through @xterm/headless. Context a
 * SessionStart hook adds reaches the model, and the transcript names it instead of printing it.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { tempDir } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type Scenario, scenario, userTexts } from './pty-harness.js';

function put(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

/** A Claude Code project as it is: a command, a skill and a PreToolUse hook in .claude/settings.json that blocks rm. */
function claudeProject(): string {
  const workspace = tempDir('crystal-claude-tui-');
  mkdirSync(join(workspace, '.git'));
  put(join(workspace, 'victim.txt'), 'keep me\n');
  put(join(workspace, '.claude', 'commands', 'tidy.md'), '---\ndescription: Tidy the repository\n---\nTidy up $ARGUMENTS.\n');
  put(
    join(workspace, '.claude', 'skills', 'notes', 'SKILL.md'),
    '---\nname: notes\ndescription: Write release notes\n---\nBe brief.\n',
  );
  put(
    join(workspace, '.claude', 'hooks', 'block-rm.sh'),
    '#!/bin/sh\ninput=$(cat)\ncase "$input" in\n  *\'"command":"rm \'*) echo "rm is not allowed here." >&2; exit 2 ;;\nesac\nexit 0\n',
  );
  put(
    join(workspace, '.claude', 'settings.json'),
    JSON.stringify({
      hooks: {
        PreToolUse: [
          { matcher: 'Bash', hooks: [{ type: 'command', command: 'sh "$CLAUDE_PROJECT_DIR/.claude/hooks/block-rm.sh"' }] },
        ],
      },
    }),
  );
  return workspace;
}

let current: Scenario | undefined;
afterEach(async () => {
  await current?.dispose();
  current = undefined;
});

describe('hooks in the terminal (HOOK-1)', () => {
  it('HOOK-1 SessionStart context reaches the model; the transcript shows the prompt and names the hook context', async () => {
    current = await scenario({
      config: {
        hooks: {
          SessionStart: [{ matcher: 'startup', hooks: [{ type: 'command', command: 'echo "Deploys are frozen today."' }] }],
        },
      },
      replies: [{ text: 'Noted the freeze.' }],
    });
    const { session, fake } = current;
    await session.waitFor('Type a message');
    await session.type('can we ship?');
    session.write('\r');
    await session.waitFor('Noted the freeze.');
    const screen = await session.waitIdle();
    expect(userTexts(fake)[0]?.at(-1)).toContain(
      '<hook-context event="SessionStart">\nDeploys are frozen today.\n</hook-context>',
    );
    expect(screen).toContain('can we ship?');
    expect(screen).toContain('[with SessionStart hook context]');
    expect(screen).not.toContain('Deploys are frozen today.');
  });

  it('HOOK-1 CMD-1 a Claude Code project works unchanged in the terminal: its command is offered and its rm hook blocks, naming the hook', async () => {
    const workspace = claudeProject();
    current = await scenario({
      workspace,
      args: ['--approval', 'full'],
      replies: [
        { toolCalls: [{ id: 'rm', name: 'bash', arguments: { command: 'rm victim.txt' } }] },
        { text: 'The hook kept victim.txt.' },
      ],
    });
    const { session, fake } = current;
    await session.waitFor('Type a message');
    await session.type('/ti');
    const picker = await session.waitFor('Tidy the repository');
    expect(picker).toContain('/tidy');
    await session.type('dy the docs');
    session.write('\r');
    await session.waitFor('The hook kept victim.txt.');
    expect(userTexts(fake)[0]?.at(-1)).toBe('Tidy up the docs.');
    expect(JSON.stringify(fake.requests[0]?.body)).toContain('- notes: Write release notes');
    expect(readFileSync(join(workspace, 'victim.txt'), 'utf8')).toBe('keep me\n');
    expect(JSON.stringify(fake.requests[1]?.body)).toContain('Blocked by the PreToolUse hook');
    expect(existsSync(join(workspace, 'victim.txt'))).toBe(true);
  });
});
