/** REL-9: one oversized message never poisons a session; compaction fits items larger than the window. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ChatMessage, emptyUsage, userMessage } from '@crystal/core';
import { FakeProvider, type FakeReply, fakeConfig } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type Config, type ControllerEvent, SessionController, SessionFiles } from '../src/index.js';

let fake: FakeProvider | undefined;
let controller: SessionController | undefined;
afterEach(async () => {
  await controller?.close().catch(() => undefined);
  await fake?.close();
  fake = undefined;
  controller = undefined;
});

const WINDOW = 20_000;
const MEGABYTE = 'x'.repeat(1024 * 1024);
const assistant = (text: string): ChatMessage => ({ role: 'assistant', content: [{ type: 'text', text }] });

async function open(replies: FakeReply[], resume?: string, home = mkdtempSync(join(tmpdir(), 'crystal-rel9-'))) {
  fake = await FakeProvider.start({ replies, whenExhausted: 'error' });
  const config = fakeConfig(fake.baseUri) as Config;
  const model = config.providers?.fake?.models['fake-model'];
  if (model) Object.assign(model, { contextWindow: WINDOW, maxTokens: 500 });
  controller = await SessionController.open({ home, workspace: home, config, env: {}, ...(resume ? { resume } : {}) });
  const events: ControllerEvent[] = [];
  controller.on((e) => events.push(e));
  return { fake, controller, events, home };
}

/** A session saved before the guard existed: one item far larger than the window, then a normal turn. */
async function poisonedSession(home: string, id: string, big: ChatMessage[]): Promise<void> {
  const messages = [...big, userMessage('second question'), assistant('second answer')];
  await SessionFiles.create(home, id).save({
    id,
    workspace: home,
    createdUtc: '2026-11-30T00:00:00.000Z',
    updatedUtc: '2026-11-30T00:00:00.000Z',
    provider: 'fake',
    model: 'fake-model',
    context: messages,
    archive: messages,
    userTurns: 2,
    modelCalls: 2,
    toolCalls: 0,
    usage: emptyUsage,
    cumulativeUsage: emptyUsage,
    queued: [],
    images: [],
    imageMarkersTagged: true,
    pendingApprovals: [],
  });
}

describe('REL-9 oversized messages', () => {
  it('REL-9 a 1 MB message is refused before it is sent, naming its size and the window; the next normal turn works', async () => {
    const { controller, fake, events } = await open([{ text: 'normal answer' }]);
    controller.submit(MEGABYTE);
    await controller.whenIdle();
    const error = events.find((e) => e.type === 'error');
    expect(error).toMatchObject({
      type: 'error',
      message: expect.stringMatching(
        /^This message is about 262,144 tokens \(1,048,576 characters\); fake\/fake-model has a 20,000-token window \(500 kept for the reply, [\d,]+ for the system prompt\), so it cannot fit and was not sent\./,
      ),
    });
    expect(fake.requests).toHaveLength(0);
    expect(controller.session.history()).toHaveLength(0);
    controller.submit('hello');
    await controller.whenIdle();
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]?.rawBody.length).toBeLessThan(WINDOW * 4);
    expect(events.some((e) => e.type === 'turn-finished' && e.result.stopReason === 'completed')).toBe(true);
  });

  it('REL-9 /compact on a session whose one message exceeds the window shortens it for the summary request', async () => {
    const home = mkdtempSync(join(tmpdir(), 'crystal-rel9-'));
    await poisonedSession(home, 'poisoned', [userMessage(`start ${MEGABYTE} end`), assistant('ok')]);
    const { controller, fake, events } = await open(
      [{ text: '## Objective\n- the big paste' }, { text: 'after compaction' }],
      'poisoned',
      home,
    );
    controller.submit('/compact');
    await controller.whenIdle();
    const output = events.find((e) => e.type === 'command-output');
    expect(output).toMatchObject({ output: { kind: 'text', title: 'Earlier context' } });
    const summaryRequest = fake.requests[0]?.rawBody ?? '';
    expect(summaryRequest.length).toBeLessThan(WINDOW * 4);
    expect(summaryRequest).toContain('[User]: start xxx');
    expect(summaryRequest).toMatch(/characters left out/);
    expect(summaryRequest).toContain('xxx end');
    controller.submit('and now?');
    await controller.whenIdle();
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[1]?.rawBody.length).toBeLessThan(WINDOW * 4);
    expect(events.some((e) => e.type === 'turn-finished' && e.result.stopReason === 'completed')).toBe(true);
  });

  it('REL-9 /compact on a session with a huge tool result and a huge reply fits the summary request in the window', async () => {
    const home = mkdtempSync(join(tmpdir(), 'crystal-rel9-'));
    await poisonedSession(home, 'toolish', [
      userMessage('run the dump'),
      { role: 'assistant', content: [{ type: 'tool-call', id: 'c1', name: 'bash', arguments: '{"command":"cat big"}' }] },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', callId: 'c1', name: 'bash', isError: false, content: [{ type: 'text', text: MEGABYTE }] },
        ],
      },
      assistant(`the dump says ${MEGABYTE}`),
    ]);
    const { controller, fake, events } = await open([{ text: '## Objective\n- the dump' }], 'toolish', home);
    controller.submit('/compact');
    await controller.whenIdle();
    expect(events.find((e) => e.type === 'command-output')).toMatchObject({ output: { kind: 'text' } });
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]?.rawBody.length).toBeLessThan(WINDOW * 4);
  });
});
