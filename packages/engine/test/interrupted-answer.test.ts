/**
 * Issue 14 item 5: an interrupted answer stays in the model context as what was streamed plus
 * an "interrupted" mark (as Codex and Claude Code keep it), so the next request never holds two
 * user messages in a row. Asserted on what the fake provider received.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeProvider, type FakeReply, fakeConfig } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type Config, type ControllerEvent, INTERRUPTED_ANSWER_MARK, SessionController, SessionFiles } from '../src/index.js';

let fake: FakeProvider | undefined;
let controller: SessionController | undefined;
afterEach(async () => {
  await controller?.close().catch(() => undefined);
  await fake?.close();
  fake = undefined;
  controller = undefined;
});

async function open(replies: FakeReply[]) {
  fake = await FakeProvider.start({ replies, whenExhausted: 'error' });
  const home = mkdtempSync(join(tmpdir(), 'crystal-interrupt-'));
  controller = await SessionController.open({ home, workspace: home, config: fakeConfig(fake.baseUri) as Config, env: {} });
  const events: ControllerEvent[] = [];
  controller.on((e) => events.push(e));
  return { fake, controller, events, home };
}

const until = async (predicate: () => boolean) => {
  for (let i = 0; i < 1000 && !predicate(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(predicate()).toBe(true);
};

type Sent = Array<{ role: string; content: string }>;
const messagesOf = (f: FakeProvider, index: number): Sent => (f.requests[index]?.body as { messages: Sent }).messages;

function expectNoTwoUsersInARow(messages: Sent): void {
  for (let i = 1; i < messages.length; i++) {
    if (messages[i]?.role === 'user') expect(messages[i - 1]?.role).not.toBe('user');
  }
}

describe('an interrupted answer stays in the model context', () => {
  it('QUEUE-4 empty Enter with a queue interrupts the answer; the next request carries the streamed text marked as interrupted', async () => {
    const { controller, fake, events } = await open([{ text: 'The answer begins', textTokens: 400, delayMs: 5 }, { text: 'ok' }]);
    controller.submit('first question');
    await until(() => events.filter((e) => e.type === 'text-delta').length >= 5);
    controller.submit('second question');
    controller.submit('');
    await controller.whenIdle();
    expect(fake.requests).toHaveLength(2);
    const messages = messagesOf(fake, 1);
    expect(messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    const assistant = messages[2]?.content ?? '';
    expect(assistant.startsWith('The answer begins')).toBe(true);
    expect(assistant.endsWith(INTERRUPTED_ANSWER_MARK)).toBe(true);
    expect(messages[3]?.content).toBe('second question');
    // The archive (what resume replays) keeps it too.
    const { state } = SessionFiles.load(controller.session.home, controller.session.id);
    expect(state.archive.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
  });

  it('QUEUE-12 Ctrl+C before any text arrived (during a retry wait) still leaves no two user messages in a row', async () => {
    const { controller, fake, events } = await open([
      { error: { status: 503, message: 'overloaded', headers: { 'retry-after': '60' } } },
      { text: 'fine' },
    ]);
    controller.submit('first question');
    await until(() => events.some((e) => e.type === 'retry-scheduled'));
    expect(controller.ctrlC(true)).toBe('interrupted');
    await controller.whenIdle();
    controller.submit('second question');
    await controller.whenIdle();
    expect(fake.requests).toHaveLength(2);
    const messages = messagesOf(fake, 1);
    expectNoTwoUsersInARow(messages);
    expect(messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(messages[2]?.content).toBe(INTERRUPTED_ANSWER_MARK);
  });
});
