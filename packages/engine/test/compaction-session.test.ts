import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ToolDefinition } from '@crystal/core';
import { FakeProvider, type FakeReply, fakeConfig } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type Config, type ControllerEvent, SessionController, SessionFiles } from '../src/index.js';
import { echoTool } from './helpers.js';

let fake: FakeProvider | undefined;
let controller: SessionController | undefined;
afterEach(async () => {
  await controller?.close().catch(() => undefined);
  await fake?.close();
  fake = undefined;
  controller = undefined;
});

/**
 * A model with a 20,000-token window and 500 output tokens: the compaction limit is 16,000
 * tokens and the kept tail about 4,875 tokens (reference §4.4).
 */
async function open(replies: FakeReply[], tools: ToolDefinition[] = [], window = 20000) {
  fake = await FakeProvider.start({ replies, whenExhausted: 'error' });
  const config = fakeConfig(fake.baseUri) as Config;
  const model = config.providers?.fake?.models['fake-model'];
  if (model) Object.assign(model, { contextWindow: window, maxTokens: 500 });
  const home = mkdtempSync(join(tmpdir(), 'crystal-compact-'));
  controller = await SessionController.open({ home, workspace: home, config, env: {}, extraTools: tools });
  // The operator approves every call these tests make.
  controller.on((e) => {
    if (e.type === 'approval-requested') controller?.answerApproval(e.prompt.id, 'once');
  });
  const events: ControllerEvent[] = [];
  controller.on((e) => events.push(e));
  return { fake, controller, events, home };
}

/** An earlier question of about 6,000 estimated tokens: too big for the kept tail, so it is summarised. */
const LONG = `earlier question ${'context '.repeat(3000)}`;
const SUMMARY = '## Objective\n- test compaction\n## Important Details\n(none)';
const isSummaryRequest = (body: unknown) =>
  JSON.stringify((body as { messages: Array<{ content: string }> }).messages[1]?.content ?? '').includes('<conversation>');
const userContents = (body: unknown) =>
  (body as { messages: Array<{ role: string; content: string }> }).messages
    .filter((m) => m.role !== 'system')
    .map((m) => m.content);

async function send(c: SessionController, text: string) {
  c.submit(text);
  await c.whenIdle();
}

describe('compaction inside the session', () => {
  it('COMPACT-1 compacts before a model round when the previous round reported usage over the limit', async () => {
    const { controller, fake, events } = await open(
      [
        { text: 'short answer', usage: { input: 100, output: 10 } },
        { toolCalls: [{ id: 'c1', name: 'echo', arguments: { text: 'x' } }], usage: { input: 16500, output: 20 } },
        { text: SUMMARY, usage: { input: 300, output: 40 } },
        { text: 'done after compaction', usage: { input: 200, output: 10 } },
      ],
      [echoTool],
    );
    await send(controller, LONG);
    await send(controller, 'now use the tool');
    expect(fake.requests).toHaveLength(4);
    expect(isSummaryRequest(fake.requests[2]?.body)).toBe(true);
    expect((fake.requests[2]?.body as { tools?: unknown }).tools).toBeUndefined();
    const afterCompaction = (fake.requests[3]?.body as { messages: Array<{ role: string; content: string }> }).messages;
    expect(afterCompaction[1]).toMatchObject({ role: 'system', content: expect.stringContaining('## Earlier context') });
    expect(JSON.stringify(afterCompaction)).not.toContain('earlier question');
    expect(events.some((e) => e.type === 'compaction-finished' && e.outcome === 'applied')).toBe(true);
  });

  it('COMPACT-2 one failed compaction still over budget stops the turn with context_overflow', async () => {
    const { controller, fake, events } = await open([{ text: 'never' }], [], 3000);
    // REL-9 refuses a message that cannot fit at all; its note names the system prompt's share,
    // so this one fits the window (3,000 - 500 for the reply) but not the compaction limit (2,400).
    await send(controller, 'x'.repeat(20_000));
    const refusal = events.find((e) => e.type === 'error') as { message: string };
    const system = Number(/([\d,]+) for the system prompt/.exec(refusal.message)?.[1]?.replace(/,/g, ''));
    await send(controller, 'w'.repeat((2500 - system - 10) * 4));
    expect(fake.requests).toHaveLength(0);
    expect(events.find((e) => e.type === 'turn-finished')).toMatchObject({ result: { stopReason: 'context_overflow' } });
  });

  it('COMPACT-3 after a completed turn, compaction is considered from the reported usage', async () => {
    const { controller, fake } = await open([
      { text: 'first', usage: { input: 100, output: 5 } },
      { text: 'second', usage: { input: 16500, output: 20 } },
      { text: SUMMARY },
    ]);
    await send(controller, LONG);
    await send(controller, 'two');
    expect(fake.requests).toHaveLength(3);
    expect(isSummaryRequest(fake.requests[2]?.body)).toBe(true);
  });

  it('FIN-5 a length, content-filter or failed stop does not compact, even over the limit', async () => {
    const { controller, fake } = await open([
      { text: 'first', usage: { input: 100, output: 5 } },
      { text: 'cut', finish: 'length', usage: { input: 16500, output: 20 } },
      { text: 'filtered', finish: 'content_filter', usage: { input: 16500, output: 20 } },
    ]);
    await send(controller, LONG);
    await send(controller, 'two');
    await send(controller, 'three');
    expect(fake.requests).toHaveLength(3);
    expect(fake.requests.some((r) => isSummaryRequest(r.body))).toBe(false);
  });

  it('COMPACT-4 /compact (alias /summarize) summarises older turns at once, below the threshold', async () => {
    const { controller, fake, events } = await open([{ text: 'a1' }, { text: 'a2' }, { text: SUMMARY }]);
    await send(controller, 'q1');
    await send(controller, 'q2');
    await send(controller, '/summarize');
    expect(isSummaryRequest(fake.requests[2]?.body)).toBe(true);
    const output = events.filter((e) => e.type === 'command-output').at(-1);
    expect(output).toMatchObject({
      output: { kind: 'text', title: 'Earlier context', text: expect.stringContaining('## Objective') },
    });
  });

  it('COMPACT-4 /compact with nothing before the latest user turn prints Nothing earlier to compact', async () => {
    const { controller, fake, events } = await open([{ text: 'a1' }]);
    await send(controller, 'only question');
    await send(controller, '/compact');
    expect(fake.requests).toHaveLength(1);
    expect(events.filter((e) => e.type === 'command-output').at(-1)).toMatchObject({
      output: { text: 'Nothing earlier to compact' },
    });
  });

  it('COMPACT-5 QUEUE-9 QUEUE-10 during compaction the controller stays live: reports run, session changes are refused', async () => {
    const { controller, events } = await open([{ text: 'a1' }, { text: 'a2' }, { text: SUMMARY, delayMs: 40 }]);
    await send(controller, 'q1');
    await send(controller, 'q2');
    controller.submit('/compact');
    for (let i = 0; i < 200 && controller.activity !== 'compacting'; i++) await new Promise((r) => setTimeout(r, 5));
    expect(controller.activity).toBe('compacting');
    controller.submit('/status');
    controller.submit('/clear');
    controller.submit('/model');
    const outputs = () =>
      (events.filter((e) => e.type === 'command-output') as Array<{ output: { kind: string; text: string } }>).map(
        (e) => e.output.text,
      );
    for (let i = 0; i < 100 && !outputs().some((t) => t.includes('Workspace')); i++) await new Promise((r) => setTimeout(r, 5));
    expect(controller.activity).toBe('compacting');
    expect(outputs().some((t) => t.includes('Workspace'))).toBe(true);
    expect(outputs()).toContain('/clear cannot run during compaction; wait for it or press Ctrl+C.');
    expect(outputs()).toContain('/model cannot run during compaction; wait for it or press Ctrl+C.');
    await controller.whenIdle();
  });

  it('QUEUE-4 empty Enter with a queued follow-up interrupts a running compaction, and the follow-up goes at once', async () => {
    const { controller, events, fake } = await open([
      { text: 'a1' },
      { text: 'a2' },
      { textTokens: 2000, delayMs: 10 },
      { text: 'answer to the follow-up' },
    ]);
    await send(controller, 'q1');
    await send(controller, 'q2');
    controller.submit('/compact');
    for (let i = 0; i < 200 && controller.activity !== 'compacting'; i++) await new Promise((r) => setTimeout(r, 5));
    expect(controller.activity).toBe('compacting');
    // The summary request is streaming when Enter comes.
    for (let i = 0; i < 200 && fake.requests.length < 3; i++) await new Promise((r) => setTimeout(r, 5));
    expect(isSummaryRequest(fake.requests[2]?.body)).toBe(true);
    controller.submit('the follow-up');
    expect(controller.queue.map((q) => q.text)).toEqual(['the follow-up']);
    controller.submit('');
    await controller.whenIdle();
    expect(events.some((e) => e.type === 'compaction-finished' && e.outcome === 'interrupted')).toBe(true);
    expect(fake.requests).toHaveLength(4);
    expect(userContents(fake.requests[3]?.body).at(-1)).toBe('the follow-up');
  });

  it('QUEUE-11 /quit cancels compaction and exits', async () => {
    const { controller, events } = await open([{ text: 'a1' }, { text: 'a2' }, { textTokens: 2000, delayMs: 10 }]);
    await send(controller, 'q1');
    await send(controller, 'q2');
    controller.submit('/compact');
    for (let i = 0; i < 200 && controller.activity !== 'compacting'; i++) await new Promise((r) => setTimeout(r, 5));
    controller.submit('/quit');
    for (let i = 0; i < 200 && !events.some((e) => e.type === 'quit'); i++) await new Promise((r) => setTimeout(r, 10));
    expect(events.some((e) => e.type === 'quit')).toBe(true);
    expect(events.some((e) => e.type === 'compaction-finished' && e.outcome === 'interrupted')).toBe(true);
  });
});

describe('two transcripts', () => {
  it('HIST-1 HIST-2 HIST-3 compaction replaces the model context and leaves the archive whole', async () => {
    const { controller, home } = await open([{ text: 'a1' }, { text: 'a2' }, { text: SUMMARY }]);
    await send(controller, 'q1');
    await send(controller, 'q2');
    await send(controller, '/compact');
    const { state } = SessionFiles.load(home, controller.session.id);
    expect(state.archive.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(state.context[0]).toMatchObject({
      role: 'system',
      content: [{ type: 'text', text: expect.stringContaining('## Earlier context') }],
    });
    expect(state.context.length).toBeLessThan(state.archive.length + 1);
  });

  it('HIST-4 later model calls read the model context; HIST-5 resume and export read the archive', async () => {
    const { controller, fake, home } = await open([{ text: 'a1' }, { text: 'a2' }, { text: SUMMARY }, { text: 'a3' }]);
    await send(controller, 'q1');
    await send(controller, 'q2');
    await send(controller, '/compact');
    await send(controller, 'q3');
    expect(userContents(fake.requests[3]?.body)).not.toContain('q1');
    const id = controller.session.id;
    const resumed = await SessionController.open({
      home,
      workspace: home,
      config: fakeConfig(fake.baseUri) as Config,
      env: {},
      resume: id,
    });
    expect(resumed.session.history().filter((m) => m.role === 'user')).toHaveLength(3);
    expect(JSON.parse(resumed.session.exportJson()).archive.filter((i: { role?: string }) => i.role === 'user')).toHaveLength(3);
  });

  it('HIST-6 /stats counts tools from the archive', async () => {
    const { controller, events } = await open(
      [
        {
          toolCalls: [
            { name: 'echo', arguments: { text: '1' } },
            { name: 'echo', arguments: { text: '2' } },
          ],
        },
        { text: 'ok' },
        { text: 'a2' },
        { text: SUMMARY },
      ],
      [echoTool],
    );
    await send(controller, 'go');
    await send(controller, 'q2');
    // Compaction summarises the tool turn away from the model context; the archive keeps it.
    await send(controller, '/compact');
    const calls = (messages: readonly { content: readonly { type: string }[] }[]) =>
      messages.flatMap((m) => m.content).filter((p) => p.type === 'tool-call').length;
    expect(calls(controller.session.history())).toBe(2);
    expect(controller.session.snapshot().contextMessages).toBeLessThan(controller.session.snapshot().archiveMessages);
    expect(JSON.stringify(fake?.requests.at(-1)?.body)).toContain('<conversation>');
    await send(controller, '/stats');
    expect(events.filter((e) => e.type === 'command-output').at(-1)).toMatchObject({
      output: { text: expect.stringMatching(/echo\s+2 calls\s+100% of tool calls/) },
    });
  });

  it('HIST-9 /clear drops both transcripts', async () => {
    const { controller } = await open([{ text: 'a1' }]);
    await send(controller, 'q1');
    const before = controller.session.id;
    await send(controller, '/clear');
    expect(controller.session.id).not.toBe(before);
    expect(controller.session.history()).toEqual([]);
    expect(controller.session.snapshot().contextMessages).toBe(1);
  });
});
