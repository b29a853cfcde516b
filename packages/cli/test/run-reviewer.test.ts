/**
 * `crystal run` in Review and Audit (REV-1, REV-2, reference §1.3): the reviewer model is asked
 * over HTTP; its allow runs the tool, its deny returns its reason to the model and the run still
 * exits 0; a reviewer ask is an unattended deny (exit 4).
 */
import { existsSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { FakeProvider, type FakeReply, fakeConfig, runCrystal, type TempHome, tempDir, tempHome } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';

const fakes: FakeProvider[] = [];
let home: TempHome | undefined;
afterEach(async () => {
  for (const f of fakes.splice(0)) await f.close();
  home?.dispose();
  home = undefined;
});

type Body = { model?: string; messages: Array<{ role: string; content: unknown; tool_call_id?: string }> };
const text = (content: unknown): string =>
  typeof content === 'string' ? content : (content as Array<{ text?: string }>).map((p) => p.text ?? '').join('');

async function start(replies: FakeReply[]): Promise<FakeProvider> {
  const fake = await FakeProvider.start({ replies, whenExhausted: 'error' });
  fakes.push(fake);
  return fake;
}

const touch = (name: string): FakeReply => ({
  toolCalls: [{ id: 'call-1', name: 'bash', arguments: { command: `touch ${name}` } }],
});

describe('crystal run with a reviewer (REV-1, REV-2)', () => {
  it('REV-1 --approval review: a reviewer deny reaches the model as its own text and the run exits 0', async () => {
    const workspace = realpathSync(tempDir('crystal-run-rev-'));
    const fake = await start([
      touch('gone.txt'),
      {
        text: '{"outcome":"deny","risk_level":"medium","user_authorization":"low","rationale":"The user only asked a question."}',
      },
      { text: 'ok' },
    ]);
    home = tempHome(fakeConfig(fake.baseUri));
    const result = await runCrystal(['run', '--approval', 'review', 'what is in here?'], { home: home.path, cwd: workspace });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(existsSync(join(workspace, 'gone.txt'))).toBe(false);
    const tool = (fake.requests[2]?.body as Body).messages.find((m) => m.role === 'tool');
    expect(text(tool?.content)).toBe(
      'The approval reviewer declined this action: The user only asked a question. Do not retry the same call. Change the approach or ask the user.',
    );
  });

  it('REV-1 REV-2 --approval audit with --approval-provider/--approval-model-id: the reviewer’s own model allows, the tool runs', async () => {
    const workspace = realpathSync(tempDir('crystal-run-audit-'));
    const judge = await start([{ text: '{"decision":"allow","risk":"low","authority":"high","reason":"asked"}' }]);
    const fake = await start([touch('made.txt'), { text: 'done' }]);
    home = tempHome(
      fakeConfig(fake.baseUri, {
        sandbox: 'off',
        providers: {
          fake: { protocol: 'openai', baseUri: fake.baseUri, apiKey: 'k', models: { 'fake-model': { contextWindow: 128000 } } },
          judge: { protocol: 'openai', baseUri: judge.baseUri, apiKey: 'j', models: { small: { contextWindow: 8000 } } },
        },
      }),
    );
    const result = await runCrystal(
      ['run', '--approval', 'audit', '--approval-provider', 'judge', '--approval-model-id', 'small', 'touch made.txt'],
      { home: home.path, cwd: workspace },
    );
    expect(result.code).toBe(0);
    expect(existsSync(join(workspace, 'made.txt'))).toBe(true);
    expect(fake.requests).toHaveLength(2);
    expect((judge.requests[0]?.body as Body).model).toBe('small');
  });

  it('REV-1 a reviewer ask is an unattended deny: exit 4, and the reviewer failure is shown', async () => {
    const workspace = realpathSync(tempDir('crystal-run-ask-'));
    const fake = await start([touch('x'), { text: 'not json at all' }, { text: 'ok' }]);
    home = tempHome(fakeConfig(fake.baseUri, { sandbox: 'off' }));
    const result = await runCrystal(['run', '--approval', 'review', 'touch x'], { home: home.path, cwd: workspace });
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('The approval reviewer did not return a usable assessment.');
  });

  it('REV-2 --approval-model off with a provider is a usage error naming both flags', async () => {
    const fake = await start([{ text: 'never' }]);
    home = tempHome(fakeConfig(fake.baseUri));
    const result = await runCrystal(['run', '--approval-model', 'off', '--approval-provider', 'x', 'hi'], { home: home.path });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('--approval-model off cannot be combined with --approval-provider or --approval-model-id.');
    expect(fake.requests).toHaveLength(0);
  });
});
