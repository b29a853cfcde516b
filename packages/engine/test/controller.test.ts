import { mkdtempSync, readFileSync } from 'node:fs';
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

async function open(replies: FakeReply[], tools: ToolDefinition[] = [], home = mkdtempSync(join(tmpdir(), 'crystal-ctl-'))) {
  fake = await FakeProvider.start({ replies, whenExhausted: 'error' });
  controller = await SessionController.open({
    home,
    workspace: home,
    config: fakeConfig(fake.baseUri) as Config,
    env: {},
    extraTools: tools,
  });
  // The operator approves every call these tests make.
  controller.on((e) => {
    if (e.type === 'approval-requested') controller?.answerApproval(e.prompt.id, 'once');
  });
  const events: ControllerEvent[] = [];
  controller.on((e) => events.push(e));
  return { fake, controller, events, home };
}

const until = async (predicate: () => boolean) => {
  for (let i = 0; i < 400 && !predicate(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(predicate()).toBe(true);
};

const lastUserText = (f: FakeProvider, index: number) => {
  const messages = (f.requests[index]?.body as { messages: Array<{ role: string; content: string }> }).messages;
  return messages.filter((m) => m.role === 'user').map((m) => m.content);
};

const slow: FakeReply = { textTokens: 60, delayMs: 15 };

describe('follow-up queue and commands', () => {
  it('QUEUE-1 QUEUE-2 input stays open during a turn: Enter with text enqueues a follow-up (FIFO) shown in the queue', async () => {
    const { controller, events } = await open([slow, { text: 'answer to both' }]);
    controller.submit('first');
    await until(() => controller.activity === 'turn');
    controller.submit('follow-up one');
    controller.submit('follow-up two');
    expect(controller.queue.map((q) => q.text)).toEqual(['follow-up one', 'follow-up two']);
    const queueEvents = events.filter((e) => e.type === 'queue');
    expect(queueEvents.at(-1)).toMatchObject({ items: [{ text: 'follow-up one' }, { text: 'follow-up two' }] });
  });

  it('QUEUE-3 the queue is sent when the turn ends', async () => {
    const { controller, fake } = await open([slow, { text: 'second answer' }]);
    controller.submit('first');
    await until(() => controller.activity === 'turn');
    controller.submit('later question');
    await until(() => fake.requests.length === 2);
    await controller.whenIdle();
    expect(lastUserText(fake, 1)).toEqual(['first', 'later question']);
    expect(controller.queue).toEqual([]);
  });

  it('QUEUE-3 the queue is sent when the current tool batch ends, within the same turn', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const gated: ToolDefinition = {
      ...echoTool,
      execute: async () => {
        await gate;
        return 'tool done';
      },
    };
    const { controller, fake } = await open(
      [{ toolCalls: [{ id: 't1', name: 'echo', arguments: { text: 'x' } }] }, { text: 'final' }],
      [gated],
    );
    controller.submit('use the tool');
    await until(() => controller.activity === 'tool_batch');
    controller.submit('also consider this');
    release();
    await controller.whenIdle();
    expect(fake.requests).toHaveLength(2);
    const second = (fake.requests[1]?.body as { messages: Array<{ role: string; content: string }> }).messages;
    expect(second.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'user']);
    expect(second.at(-1)?.content).toBe('also consider this');
  });

  it('QUEUE-4 empty Enter with queued follow-ups interrupts the turn so the queue is sent at once', async () => {
    const { controller, fake } = await open([{ textTokens: 2000, delayMs: 10 }, { text: 'queued answer' }]);
    controller.submit('long job');
    await until(() => fake.requests.length === 1 && controller.activity === 'turn');
    controller.submit('change of plan');
    controller.submit('');
    await until(() => fake.requests.length === 2);
    await controller.whenIdle();
    expect(lastUserText(fake, 1)).toEqual(['long job', 'change of plan']);
  });

  it('QUEUE-5 empty Enter with an empty queue does not stop the turn', async () => {
    const { controller, events } = await open([{ textTokens: 30, delayMs: 5 }]);
    controller.submit('go');
    await until(() => controller.activity === 'turn');
    controller.submit('');
    await controller.whenIdle();
    const finished = events.find((e) => e.type === 'turn-finished');
    expect(finished).toMatchObject({ result: { stopReason: 'completed' } });
  });

  it('QUEUE-6 QUEUE-7 QUEUE-8 /clear stops a busy turn, drops follow-ups queued before it, and runs in typed order', async () => {
    const { controller, fake, events } = await open([{ textTokens: 2000, delayMs: 10 }, { text: 'fresh answer' }]);
    controller.submit('old conversation');
    await until(() => fake.requests.length === 1);
    const oldId = controller.session.id;
    controller.submit('stale follow-up');
    controller.submit('/clear');
    controller.submit('new question');
    expect(controller.queue.map((q) => q.text)).toEqual(['/clear', 'new question']);
    await until(() => fake.requests.length === 2);
    await controller.whenIdle();
    expect(events.find((e) => e.type === 'turn-finished')).toMatchObject({ result: { stopReason: 'interrupted' } });
    expect(controller.session.id).not.toBe(oldId);
    expect(lastUserText(fake, 1)).toEqual(['new question']);
  });

  it('QUEUE-10 report-only commands run at once during a turn', async () => {
    const { controller, events } = await open([{ textTokens: 100, delayMs: 5 }]);
    controller.submit('go');
    await until(() => controller.activity === 'turn');
    controller.submit('/status');
    controller.submit('/help');
    await until(() => events.filter((e) => e.type === 'command-output').length === 2);
    expect(controller.activity).not.toBe('idle');
    const outputs = events.filter((e) => e.type === 'command-output') as Array<{ output: { kind: string; text: string } }>;
    expect(outputs[0]?.output.text).toContain('Workspace');
    expect(outputs[1]?.output.text).toContain('/quit');
  });

  it('QUEUE-12 Ctrl+C interrupts the turn without dropping queued text', async () => {
    const { controller, events } = await open([{ textTokens: 2000, delayMs: 10 }, { text: 'after' }]);
    controller.submit('go');
    await until(() => (fake as FakeProvider).requests.length === 1);
    controller.submit('keep me');
    expect(controller.ctrlC(true)).toBe('interrupted');
    await until(() => events.some((e) => e.type === 'turn-finished'));
    expect(events.find((e) => e.type === 'turn-finished')).toMatchObject({ result: { stopReason: 'interrupted' } });
    await controller.whenIdle();
    expect(lastUserText(fake as FakeProvider, 1)).toContain('keep me');
  });

  it('QUEUE-13 at an idle prompt Ctrl+C clears the composer; two on an empty composer exit', async () => {
    const { controller, events } = await open([{ text: 'x' }]);
    expect(controller.ctrlC(false)).toBe('clear-composer');
    expect(controller.ctrlC(true)).toBe('exit-armed');
    expect(controller.ctrlC(true)).toBe('exit');
    await until(() => events.some((e) => e.type === 'quit'));
  });

  it('queued follow-ups survive a crash: they are saved as they change and offered back at resume', async () => {
    const { controller, home, fake: f } = await open([{ textTokens: 3000, delayMs: 10 }]);
    controller.submit('long');
    await until(() => f.requests.length === 1);
    controller.submit('do not lose me');
    const savedQueue = (): readonly string[] => {
      try {
        return SessionFiles.load(home, controller.session.id).state.queued;
      } catch {
        return [];
      }
    };
    await until(() => savedQueue().length === 1);
    const id = controller.session.id;
    const resumed = await SessionController.open({
      home,
      workspace: home,
      config: fakeConfig((fake as FakeProvider).baseUri) as Config,
      env: {},
      resume: id,
    });
    expect(resumed.queue.map((q) => q.text)).toEqual(['do not lose me']);
  });

  it('unknown commands print unknown command; idle-only commands are refused during a turn', async () => {
    const { controller, events } = await open([{ textTokens: 100, delayMs: 5 }]);
    controller.submit('/frobnicate');
    expect(events.at(-1)).toMatchObject({
      type: 'command-output',
      output: { kind: 'error', text: 'unknown command /frobnicate' },
    });
    controller.submit('go');
    await until(() => controller.activity === 'turn');
    controller.submit('/model');
    expect(events.at(-1)).toMatchObject({ output: { kind: 'error', text: expect.stringContaining('cannot run during a turn') } });
  });

  it('/fork copies the session to a new id and leaves the source untouched; /resume goes back', async () => {
    const { controller, home } = await open([{ text: 'one' }, { text: 'two' }]);
    controller.submit('first');
    await controller.whenIdle();
    const source = controller.session.id;
    const before = SessionFiles.load(home, source).state.archive.length;
    controller.submit('/fork');
    await controller.whenIdle();
    expect(controller.session.id).not.toBe(source);
    expect(controller.session.history()).toHaveLength(before);
    controller.submit('second');
    await controller.whenIdle();
    expect(SessionFiles.load(home, source).state.archive).toHaveLength(before);
    controller.submit(`/resume ${source}`);
    await controller.whenIdle();
    expect(controller.session.id).toBe(source);
  });
});

describe('preference and export commands', () => {
  it('TUI-5 /approval sets and persists the mode; /thinking persists the gear; /export writes JSON and Markdown', async () => {
    const { controller, events, home } = await open([{ text: 'answer' }]);
    controller.submit('first question');
    await controller.whenIdle();
    controller.submit('/approval edit');
    controller.submit('/thinking high');
    controller.submit('/export markdown');
    controller.submit('/export json');
    await controller.whenIdle();
    expect(controller.approvalMode).toBe('edit');
    const config = JSON.parse(readFileSync(join(home, 'config.json'), 'utf8'));
    expect(config).toMatchObject({ approval: 'edit', thinkingEffort: 'high' });
    const outputs = events.filter((e) => e.type === 'command-output') as Array<{ output: { text: string } }>;
    const paths = outputs
      .map((o) => o.output.text)
      .filter((t) => t.startsWith('Exported to '))
      .map((t) => t.slice(12));
    expect(paths).toHaveLength(2);
    const markdown = readFileSync(paths.find((p) => p.endsWith('.md')) as string, 'utf8');
    expect(markdown).toContain('## User\n\nfirst question');
    expect(markdown).toContain('## Assistant\n\nanswer');
    expect(JSON.parse(readFileSync(paths.find((p) => p.endsWith('.json')) as string, 'utf8')).archive).toHaveLength(2);
  });

  it('TUI-5 /model lists the catalog and refuses a model outside it (CONF-6)', async () => {
    const { controller, events } = await open([{ text: 'x' }]);
    controller.submit('/model');
    controller.submit('/model nowhere-model');
    await controller.whenIdle();
    const outputs = events.filter((e) => e.type === 'command-output') as Array<{ output: { kind: string; text: string } }>;
    expect(outputs[0]?.output.text).toMatch(/fake \(openai\)\n {2}\* fake-model/);
    expect(outputs[1]?.output).toMatchObject({ kind: 'error', text: expect.stringContaining("Unknown model 'nowhere-model'") });
  });

  it('CORE-3 TUI-5 /model switches the client: the next request goes to the new model', async () => {
    fake = await FakeProvider.start({
      replies: [{ text: 'from the first' }, { text: 'from the second' }],
      whenExhausted: 'error',
    });
    const config = fakeConfig(fake.baseUri) as Config;
    const fakeProvider = config.providers?.fake;
    if (fakeProvider) Object.assign(fakeProvider.models, { 'second-model': { contextWindow: 64000, maxTokens: 2048 } });
    const home = mkdtempSync(join(tmpdir(), 'crystal-ctl-'));
    controller = await SessionController.open({ home, workspace: home, config, env: {} });
    controller.submit('one');
    await controller.whenIdle();
    controller.submit('/model second-model');
    await controller.whenIdle();
    controller.submit('two');
    await controller.whenIdle();
    const models = fake.requests.map((r) => (r.body as { model: string }).model);
    expect(models).toEqual(['fake-model', 'second-model']);
    expect(controller.session.model).toBe('second-model');
  });
});
