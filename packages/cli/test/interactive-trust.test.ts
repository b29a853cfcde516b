import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Scenario, scenario } from './pty-harness.js';

let current: Scenario | undefined;
afterEach(async () => {
  await current?.dispose();
  current = undefined;
});

describe('workspace trust in the terminal', () => {
  it('CLI-8 the first entry into a directory asks; a yes is stored and the session starts', async () => {
    current = await scenario({ replies: [{ text: 'hi' }], config: { workspaceTrust: true } });
    const { session, home } = current;
    await session.waitFor('Do you trust the files in');
    session.write('y\r');
    await session.waitFor('Type a message');
    const trusted = JSON.parse(readFileSync(join(home.path, 'trusted.json'), 'utf8')).trusted as string[];
    expect(trusted).toHaveLength(1);
  });

  it('CLI-8 a no exits without recording anything, so the next launch asks again', async () => {
    current = await scenario({ replies: [{ text: 'hi' }], config: { workspaceTrust: true } });
    const { session, home } = current;
    await session.waitFor('Do you trust the files in');
    session.write('n\r');
    const { exitCode } = await session.exited;
    expect(exitCode).toBe(1);
    expect(existsSync(join(home.path, 'trusted.json'))).toBe(false);
  });
});
