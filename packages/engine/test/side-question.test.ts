import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeProvider, type FakeReply, fakeConfig } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type Config, type ControllerEvent, SessionController } from '../src/index.js';

let fake: FakeProvider | undefined;
let controller: SessionController | undefined;
afterEach(async () => {
  await controller?.close().catch(() => undefined);
  await fake?.close();
  fake = undefined;
  controller = undefined;
});

async function open(replies: FakeReply[], window?: number) {
  fake = await FakeProvider.start({ replies, whenExhausted: 'error' });
  const config = fakeConfig(fake.baseUri) as Config;
  const model = config.providers?.fake?.models['fake-model'];
  if (model && window) Object.assign(model, { contextWindow: window, maxTokens: 500 });
  const home = mkdtempSync(join(tmpdir(), 'crystal-btw-'));
  controller = await SessionController.open({ home, workspace: home, config, env: {} });
  const events: ControllerEvent[] = [];
  controller.on((e) => events.push(e));
  return { fake, controller, events, home };
}

const until = async (predicate: () => boolean) => {
  for (let i = 0; i < 400 && !predicate(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(predicate()).toBe(true);
};
type Body = { messages: Array<{ role: string; content: string }>; tools?: unknown };
const bodyOf = (f: FakeProvider, i: number) => f.requests[i]?.body as Body;
const sessionFiles = (home: string) =>
  readdirSync(join(home, 'sessions'))
    .sort()
    .map((n) => readFileSync(join(home, 'sessions', n), 'utf8'))
    .join('\n');

describe('side questions (/btw)', () => {
  it('BTW-1 BTW-2 asks from the archive and earlier side exchanges with the working model, the system message and no tools', async () => {
    const { controller, fake, events } = await open([{ text: 'main answer' }, { text: 'side one' }, { text: 'side two' }]);
    controller.submit('main question');
    await controller.whenIdle();
    controller.submit('/btw what did I ask?');
    await controller.whenIdle();
    controller.submit('/side and before that?');
    await controller.whenIdle();
    const second = bodyOf(fake, 2);
    expect(second.messages[0]?.role).toBe('system');
    expect(second.tools).toBeUndefined();
    expect((fake.requests[2]?.body as { model: string }).model).toBe('fake-model');
    const text = JSON.stringify(second.messages);
    expect(text).toContain('[User]: main question');
    expect(text).toContain('[Assistant]: main answer');
    expect(text).toContain('what did I ask?');
    expect(text).toContain('side one');
    expect(second.messages.at(-1)).toEqual({ role: 'user', content: 'and before that?' });
    expect(controller.sideExchanges.map((x) => x.answer)).toEqual(['side one', 'side two']);
    expect(events.filter((e) => e.type === 'side-finished')).toHaveLength(2);
  });

  it('BTW-6 question, answer and usage never enter the queue, the transcripts, the ledger or the saved session', async () => {
    const { controller, home } = await open([
      { text: 'main', usage: { input: 10, output: 2 } },
      { text: 'secret side answer', usage: { input: 999, output: 99 } },
    ]);
    controller.submit('main question');
    await controller.whenIdle();
    const before = sessionFiles(home);
    const usageBefore = controller.session.snapshot().cumulativeUsage;
    controller.submit('/btw side question text');
    await controller.whenIdle();
    expect(sessionFiles(home)).toBe(before);
    expect(controller.session.snapshot().cumulativeUsage).toEqual(usageBefore);
    expect(JSON.stringify(controller.session.history())).not.toContain('side');
    expect(controller.queue).toEqual([]);
  });

  it('BTW-4 text of the current round still streaming is not included; BTW-10 cancelling the side question leaves the main turn running', async () => {
    const { controller, fake, events } = await open([
      { text: 'streaming main words '.repeat(40), delayMs: 15 },
      { textTokens: 500, delayMs: 10 },
    ]);
    controller.submit('main');
    await until(() => events.filter((e) => e.type === 'text-delta').length > 3);
    controller.submit('/btw quick one');
    await until(() => fake.requests.length === 2);
    expect(JSON.stringify(bodyOf(fake, 1).messages)).not.toContain('streaming main words');
    expect(controller.cancelSide()).toBe(true);
    await until(() => events.some((e) => e.type === 'side-failed'));
    expect(controller.activity).toBe('turn');
    await controller.whenIdle();
    expect(events.find((e) => e.type === 'turn-finished')).toMatchObject({ result: { stopReason: 'completed' } });
  });

  it('BTW-5 tool calls are not executed: text that came with them is kept; a bare tool call fails and the thread keeps its place', async () => {
    const { controller, events } = await open([
      { text: 'here is the answer', toolCalls: [{ name: 'read', arguments: { path: 'x' } }] },
      { toolCalls: [{ name: 'read', arguments: { path: 'y' } }] },
    ]);
    controller.submit('/btw first');
    await controller.whenIdle();
    expect(controller.sideExchanges).toEqual([{ question: 'first', answer: 'here is the answer' }]);
    controller.submit('/btw second');
    await controller.whenIdle();
    expect(events.filter((e) => e.type === 'side-failed').at(-1)).toMatchObject({
      question: 'second',
      message: expect.stringContaining('tool call'),
    });
    expect(controller.sideExchanges).toHaveLength(1);
  });

  it('BTW-3 when the request does not fit, a copy is compacted and nothing is written back', async () => {
    // Each turn is about 12,000 tokens: the main context is compacted after each turn, but the
    // archive (which the side question reads) grows past the 16,000-token limit, so the side
    // request compacts a copy of the model context instead.
    const long = (n: number) => `part ${n} ${'filler '.repeat(6800)}`;
    const summary = (n: number) => ({ text: `## Objective\n- summary ${n}` });
    const { controller, fake, home, events } = await open(
      [
        { text: 'a1', usage: { input: 16500, output: 5 } },
        summary(1),
        { text: 'a2', usage: { input: 16500, output: 5 } },
        summary(2),
        { text: 'a3', usage: { input: 3000, output: 5 } },
        { text: '## Objective\n- summary of the copy' },
        { text: 'the side answer' },
      ],
      20000,
    );
    controller.submit(long(1));
    await controller.whenIdle();
    controller.submit(long(2));
    await controller.whenIdle();
    controller.submit('short third question');
    await controller.whenIdle();
    expect(fake.requests).toHaveLength(5);
    const before = sessionFiles(home);
    controller.submit('/btw what is this about?');
    await controller.whenIdle();
    expect(events.some((e) => e.type === 'side-finished')).toBe(true);
    expect(fake.requests).toHaveLength(7);
    expect(JSON.stringify(bodyOf(fake, 5).messages)).toContain('<conversation>');
    const sideRequest = JSON.stringify(bodyOf(fake, 6).messages);
    expect(sideRequest).toContain('summary of the copy');
    expect(sideRequest).not.toContain('filler filler');
    expect(sessionFiles(home)).toBe(before);
    expect(controller.sideExchanges.at(-1)?.answer).toBe('the side answer');
  });

  it('BTW-1 the side thread keeps the latest 20 exchanges, and a side question sends only those', async () => {
    const pad = (n: number) => String(n).padStart(2, '0');
    const replies: FakeReply[] = Array.from({ length: 22 }, (_, i) => ({ text: `answer-${pad(i + 1)}` }));
    const { controller, fake } = await open(replies);
    for (let i = 1; i <= 22; i++) {
      controller.submit(`/btw question-${pad(i)}`);
      await controller.whenIdle();
    }
    expect(controller.sideExchanges).toHaveLength(20);
    expect(controller.sideExchanges[0]?.question).toBe('question-03');
    // The 22nd question carries exchanges 2..21: the latest 20 before it.
    const last = JSON.stringify(bodyOf(fake, 21).messages);
    expect(last).not.toContain('answer-01');
    for (let i = 2; i <= 21; i++) expect(last).toContain(`answer-${pad(i)}`);
  });

  it('BTW-3 when even the compacted copy does not fit, the side question fails with a clear message and nothing is sent', async () => {
    const { controller, fake, events } = await open([{ text: 'a1' }, { text: 'never asked' }], 20000);
    controller.submit('q1');
    await controller.whenIdle();
    // A question of about 24,000 estimated tokens cannot fit a 16,000-token limit, compacted or not.
    controller.submit(`/btw ${'filler '.repeat(14000)}`);
    await controller.whenIdle();
    const failed = events.find((e) => e.type === 'side-failed') as { message: string } | undefined;
    expect(failed?.message).toBe('The side question does not fit the model window, even with the conversation compacted.');
    expect(events.some((e) => e.type === 'side-finished')).toBe(false);
    expect(fake.requests.filter((r) => JSON.stringify(r.body).includes('filler filler'))).toHaveLength(0);
    expect(controller.sideExchanges).toEqual([]);
  });

  it('BTW-11 /clear drops the side thread', async () => {
    const { controller, events } = await open([{ text: 'side answer' }]);
    controller.submit('/btw hi');
    await controller.whenIdle();
    expect(controller.sideExchanges).toHaveLength(1);
    controller.submit('/clear');
    await controller.whenIdle();
    expect(controller.sideExchanges).toEqual([]);
    expect(events.some((e) => e.type === 'side-cleared')).toBe(true);
  });
});
