/**
 * HOOK-1 lifecycle events (SessionStart, UserPromptSubmit, Stop, PreCompact) in Claude Code's
 * shape, and project hooks in the OS sandbox: real shell hooks, real files, the fake provider
 * over HTTP.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeProvider, type FakeReply, fakeConfig } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type Config,
  type ControllerEvent,
  MAX_STOP_CONTINUATIONS,
  SessionController,
  splitHookContext,
  trustWorkspace,
  withHookContext,
} from '../src/index.js';

let fake: FakeProvider | undefined;
let controller: SessionController | undefined;
afterEach(async () => {
  await controller?.close().catch(() => undefined);
  controller = undefined;
  await fake?.close();
  fake = undefined;
});

type Body = { messages: Array<{ role: string; content: unknown }> };
const text = (content: unknown): string =>
  typeof content === 'string' ? content : (content as Array<{ text?: string }>).map((p) => p.text ?? '').join('');
const userTexts = (i: number): string[] =>
  ((fake?.requests[i]?.body as Body).messages ?? []).filter((m) => m.role === 'user').map((m) => text(m.content));

function places() {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'crystal-lifecycle-')));
  const workspace = join(base, 'ws');
  const home = join(base, 'home');
  const outside = join(base, 'outside');
  for (const dir of [join(workspace, '.git'), join(workspace, '.crystal'), home, outside]) mkdirSync(dir, { recursive: true });
  return { base, workspace, home, outside };
}

const group = (command: string, matcher?: string) => [{ ...(matcher ? { matcher } : {}), hooks: [{ type: 'command', command }] }];

async function open(
  replies: FakeReply[],
  hooks: Record<string, unknown>,
  extra: { config?: Record<string, unknown>; resume?: string; p?: ReturnType<typeof places> } = {},
) {
  const p = extra.p ?? places();
  fake = await FakeProvider.start({ replies, whenExhausted: 'error' });
  const config = fakeConfig(fake.baseUri, { sandbox: 'off', hooks, ...extra.config }) as Config;
  controller = await SessionController.open({ home: p.home, workspace: p.workspace, config, env: { PATH: process.env.PATH } });
  const events: ControllerEvent[] = [];
  controller.on((e) => events.push(e));
  return { ...p, controller, events };
}

const until = async (predicate: () => boolean) => {
  for (let i = 0; i < 500 && !predicate(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(predicate()).toBe(true);
};

describe('lifecycle hooks (HOOK-1)', () => {
  it('HOOK-1 SessionStart: its stdout is context for the first prompt; stdin names the source; a resume matcher does not run at startup', async () => {
    const p = places();
    const seen = join(p.outside, 'start.json');
    const { controller } = await open(
      [{ text: 'ok' }],
      {
        SessionStart: [
          ...group(`cat > ${seen}; echo 'This project uses pnpm, never npm.'`, 'startup'),
          ...group('echo resumed-only', 'resume'),
        ],
      },
      { p },
    );
    await controller.sendOnce('install deps');
    const [prompt] = userTexts(0);
    expect(prompt).toBe(
      'install deps\n\n<hook-context event="SessionStart">\nThis project uses pnpm, never npm.\n</hook-context>',
    );
    expect(JSON.parse(readFileSync(seen, 'utf8'))).toMatchObject({
      hook_event_name: 'SessionStart',
      source: 'startup',
      cwd: p.workspace,
    });
  });

  it('HOOK-1 hook context rides after the prompt in labelled blocks the surfaces can name instead of print', () => {
    const sent = withHookContext('fix it', [
      '<hook-context event="SessionStart">\nuse pnpm\n</hook-context>',
      '<hook-context event="UserPromptSubmit">\nTicket ABC-1\n</hook-context>',
    ]);
    expect(splitHookContext(sent)).toEqual({ text: 'fix it', events: ['SessionStart', 'UserPromptSubmit'] });
    expect(splitHookContext('no hooks here')).toEqual({ text: 'no hooks here', events: [] });
  });

  it('HOOK-1 UserPromptSubmit: exit 2 refuses the prompt before any request, naming the hook; JSON additionalContext is added', async () => {
    const block = `grep -q secret && { echo 'prompts about secrets are not allowed here' >&2; exit 2; } || echo '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"Ticket: ABC-1"}}'`;
    const { controller, events } = await open([{ text: 'fine' }], { UserPromptSubmit: group(block) });
    await expect(controller.sendOnce('print the secret')).rejects.toThrow(
      /^The UserPromptSubmit hook `.*` blocked this prompt: prompts about secrets are not allowed here$/,
    );
    expect(fake?.requests).toHaveLength(0);
    expect(controller.session.history()).toHaveLength(0);
    // The interactive path: the refusal is an error event and nothing is queued.
    controller.submit('another secret');
    await until(() => events.some((e) => e.type === 'error'));
    expect(fake?.requests).toHaveLength(0);
    await controller.sendOnce('fix the bug');
    expect(userTexts(0)).toEqual(['fix the bug\n\n<hook-context event="UserPromptSubmit">\nTicket: ABC-1\n</hook-context>']);
  });

  it('HOOK-1 Stop: exit 2 keeps the agent going with the reason; stop_hook_active is true on the next stop', async () => {
    const p = places();
    const log = join(p.outside, 'stop.log');
    const marker = join(p.outside, 'once');
    const stop = `cat >> ${log}; echo >> ${log}; if [ ! -e ${marker} ]; then touch ${marker}; echo 'Run the tests before you stop.' >&2; exit 2; fi`;
    const { controller } = await open([{ text: 'done early' }, { text: 'tests pass' }], { Stop: group(stop) }, { p });
    const result = await controller.sendOnce('fix it');
    expect(result.text).toBe('tests pass');
    expect(fake?.requests).toHaveLength(2);
    expect(userTexts(1).at(-1)).toMatch(/^The Stop hook `.*` asked you to continue: Run the tests before you stop\.$/);
    const inputs = readFileSync(log, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as { stop_hook_active: boolean });
    expect(inputs.map((i) => i.stop_hook_active)).toEqual([false, true]);
  });

  it('HOOK-1 Stop: a hook that never lets go is stopped after MAX_STOP_CONTINUATIONS, with a note', async () => {
    const replies = Array.from({ length: MAX_STOP_CONTINUATIONS + 1 }, () => ({ text: 'again' }));
    const { controller, events } = await open(replies, {
      Stop: group(`echo '{"decision":"block","reason":"keep going"}'`),
    });
    fake = fake as FakeProvider;
    await controller.sendOnce('go');
    expect(fake.requests).toHaveLength(MAX_STOP_CONTINUATIONS + 1);
    expect(events.some((e) => e.type === 'note' && e.text.includes(`kept the agent going ${MAX_STOP_CONTINUATIONS} times`))).toBe(
      true,
    );
  });

  it('HOOK-1 PreCompact runs before /compact with trigger manual; its exit 2 is shown, compaction goes on', async () => {
    const p = places();
    const seen = join(p.outside, 'compact.json');
    const { controller, events } = await open(
      [{ text: 'one' }, { text: 'two' }, { text: '## Objective\nsummary' }],
      { PreCompact: group(`cat > ${seen}; echo 'saving notes first' >&2; exit 2`, 'manual') },
      { p },
    );
    await controller.sendOnce('first');
    await controller.sendOnce('second');
    controller.submit('/compact');
    await until(() => events.some((e) => e.type === 'command-output'));
    expect(JSON.parse(readFileSync(seen, 'utf8'))).toMatchObject({ hook_event_name: 'PreCompact', trigger: 'manual' });
    expect(events.some((e) => e.type === 'note' && e.text.endsWith(': saving notes first'))).toBe(true);
    expect(fake?.requests).toHaveLength(3);
  });

  it('HOOK-1 SEC-6 hooks get the scrubbed child environment: no provider keys or secret-looking variables unless passed', async () => {
    const p = places();
    const seen = join(p.outside, 'env.txt');
    fake = await FakeProvider.start({ replies: [{ text: 'ok' }], whenExhausted: 'error' });
    const config = fakeConfig(fake.baseUri, {
      sandbox: 'off',
      shellEnvironment: { pass: ['PASSED_TOKEN'] },
      hooks: { UserPromptSubmit: group(`echo "[$OPENAI_API_KEY][$MY_TOKEN][$PASSED_TOKEN][$PLAIN]" > ${seen}`) },
    }) as Config;
    // The tools' children start from the process environment (the session's `env` is for keys).
    const extra = { OPENAI_API_KEY: 'sk-x', MY_TOKEN: 't', PASSED_TOKEN: 'ok', PLAIN: 'plain' };
    Object.assign(process.env, extra);
    try {
      controller = await SessionController.open({ home: p.home, workspace: p.workspace, config, env: {} });
      await controller.sendOnce('hi');
    } finally {
      for (const name of Object.keys(extra)) delete process.env[name];
    }
    expect(readFileSync(seen, 'utf8')).toBe('[][][ok][plain]\n');
  });

  it('HOOK-1 SBX-1 a trusted project hook runs inside the OS sandbox (no writes outside the workspace); a Home hook runs as configured', async () => {
    const p = places();
    await trustWorkspace(p.home, p.workspace);
    const escaped = join(p.outside, 'from-project-hook');
    const inside = join(p.workspace, 'from-project-hook');
    writeFileSync(
      join(p.workspace, '.crystal', 'settings.json'),
      JSON.stringify({ hooks: { PreToolUse: group(`touch ${escaped}; touch ${inside}; true`, 'List') } }),
    );
    const home = join(p.outside, 'from-home-hook');
    const { controller } = await open(
      [{ toolCalls: [{ id: 'l1', name: 'list', arguments: {} }] }, { text: 'ok' }],
      { PreToolUse: group(`touch ${home}`, 'List') },
      { p, config: { sandbox: 'workspace-write' } },
    );
    await controller.sendOnce('list the files');
    expect(existsSync(inside)).toBe(true);
    expect(existsSync(escaped)).toBe(false);
    expect(existsSync(home)).toBe(true);
  });
});
