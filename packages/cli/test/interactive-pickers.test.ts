import { afterEach, describe, expect, it } from 'vitest';
import { PtySession, type Scenario, scenario, userTexts } from './pty-harness.js';

let current: Scenario | undefined;
afterEach(async () => {
  await current?.dispose();
  current = undefined;
});

/** Two saved sessions in the scenario's workspace; resolves their ids, oldest first. */
async function twoSessions(s: Scenario): Promise<string[]> {
  const ids: string[] = [];
  for (const prompt of ['refactor the parser', 'write the release notes']) {
    const run = PtySession.start({ home: s.home.path, cwd: s.workspace });
    await run.waitFor('Type a message');
    await run.type(prompt);
    run.write('\r');
    await run.waitFor(`Answer to ${prompt}.`);
    await run.waitIdle();
    run.write('\x03\x03');
    await run.exited;
    ids.push(/crystal --resume (\S+)/.exec(run.output)?.[1] as string);
  }
  return ids;
}

describe('searchable pickers', () => {
  it('TUIX-11 /resume with no id lists sessions (title, age, messages), searchable, and Enter resumes the pick', async () => {
    current = await scenario({
      replies: [{ text: 'Answer to refactor the parser.' }, { text: 'Answer to write the release notes.' }],
    });
    const ids = await twoSessions(current);
    const { session } = current;
    await session.waitFor('Type a message');
    await session.type('/resume');
    session.write('\r');
    const list = await session.waitFor(/refactor the parser\s+just now · 2 messages · /);
    expect(list).toContain('Resume a session');
    expect(list).toMatch(/write the release notes\s+just now · 2 messages · /);
    expect(list).toMatch(/refactor the parser\s+just now · 2 messages · /);
    await session.type('parser');
    await session.waitFor((s) => s.includes('› refactor the parser') && !s.includes('write the release notes'));
    session.write('\r');
    const resumed = await session.waitFor(`Resumed ${ids[0]}.`);
    expect(resumed).toContain('Answer to refactor the parser.');
  });

  it('TUIX-11 crystal -r with no id opens the session picker first and resumes the pick', async () => {
    current = await scenario({
      replies: [{ text: 'Answer to refactor the parser.' }, { text: 'Answer to write the release notes.' }],
    });
    const ids = await twoSessions(current);
    const picker = PtySession.start({ home: current.home.path, cwd: current.workspace, args: ['-r'] });
    try {
      const list = await picker.waitFor('› write the release notes');
      expect(list).toContain('Resume a session');
      picker.write('\x1b[B\r');
      await picker.waitFor(`Resumed ${ids[0]}.`);
    } finally {
      picker.kill();
      await picker.exited;
    }
  });

  it('TUIX-11 /model with no argument lists the catalog models, searchable, and switches to the pick', async () => {
    // A key so the switch is accepted; no request is made.
    current = await scenario({ replies: [], env: { ANTHROPIC_API_KEY: 'test-key' } });
    const { session } = current;
    await session.waitFor('Type a message');
    await session.type('/model');
    session.write('\r');
    const list = await session.waitFor('* fake/fake-model');
    expect(list).toContain('Switch model');
    expect(list).toMatch(/fake\/fake-model\s+openai · 128k context/);
    // The starter catalog is listed too; typing narrows it.
    await session.type('sonnet');
    await session.waitFor((s) => s.includes('› anthropic/claude-sonnet-4-5') && !s.includes('* fake/fake-model'));
    session.write('\r');
    const after = await session.waitFor('Model: anthropic/claude-sonnet-4-5.');
    expect(after).not.toContain('Switch model');
    expect(after).toMatch(/│ anthropic\/claude-sonnet-4-5 │/);
    expect(userTexts(current.fake)).toEqual([]);
  });
});
