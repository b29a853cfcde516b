/** The OS sandbox and the scrubbed environment through the real `crystal run` binary (SBX-1, SBX-2, SEC-6). */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeProvider, type FakeReply, fakeConfig, runCrystal, type TempHome, tempDir, tempHome } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';

let fake: FakeProvider | undefined;
let home: TempHome | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
  home?.dispose();
  home = undefined;
});

async function setup(replies: FakeReply[], extra: Record<string, unknown> = {}) {
  fake = await FakeProvider.start({ replies, whenExhausted: 'error' });
  home = tempHome(fakeConfig(fake.baseUri, extra));
  return { fake, home };
}

const toolResultOf = (f: FakeProvider): string => {
  const messages = (f.requests[1]?.body as { messages: Array<{ role: string; content: string }> }).messages;
  return messages
    .filter((m) => m.role === 'tool')
    .map((m) => m.content)
    .join('\n');
};

describe('crystal run and the OS sandbox', () => {
  it('SBX-2 without a sandbox crystal run says so once on stderr and still runs', async () => {
    const { home } = await setup([{ text: 'done' }]);
    const result = await runCrystal(['run', 'hi'], { home: home.path, env: { CRYSTAL_BWRAP: '' } });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe(
      'No OS sandbox: CRYSTAL_BWRAP is set to an empty value. Shell commands and exec tools run with your permissions; the approval asks stay.\n',
    );
  });

  it('SBX-1 SEC-6 a bash call cannot read ~/.ssh/id_rsa nor see the provider key, and the result says why', async () => {
    const { home, fake } = await setup([
      {
        toolCalls: [
          // The classifier cannot see into a script file: the sandbox is what stops it.
          { id: 'b1', name: 'bash', arguments: { command: 'sh ./look.sh' } },
        ],
      },
      { text: 'nothing there' },
    ]);
    mkdirSync(join(home.path, '.ssh'));
    writeFileSync(join(home.path, '.ssh', 'id_rsa'), 'SECRET-RSA-MATERIAL\n');
    const ws = tempDir('crystal-ws-');
    writeFileSync(join(ws, 'look.sh'), 'cat ~/.ssh/id_rsa\nenv | grep -i -E "key|token"\nexit 1\n');
    const result = await runCrystal(['run', '--approval', 'full', '-w', ws, 'look around'], {
      home: home.path,
      env: { OPENAI_API_KEY: 'sk-must-not-leak', DEEPSEEK_API_KEY: 'sk-deepseek-must-not-leak', GH_TOKEN: 'ghp-no' },
    });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const sent = toolResultOf(fake);
    expect(sent).not.toContain('SECRET-RSA-MATERIAL');
    expect(sent).not.toContain('must-not-leak');
    expect(sent).not.toContain('ghp-no');
    expect(sent).toMatch(/\[sandbox\] .*\.ssh.* hidden inside the sandbox/);
  });
});
