/**
 * HOOK-1 in the terminal: the real binary in a pty read through @xterm/headless. Context a
 * SessionStart hook adds reaches the model, and the transcript names it instead of printing it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type Scenario, scenario, userTexts } from './pty-harness.js';

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
});
