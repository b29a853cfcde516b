import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { SessionFiles, sessionPath } from '../src/index.js';
import { echoTool, type Harness, manualClock, openSession } from './helpers.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const types = (harness: Harness) => harness.events.map((e) => e.type);

describe('the turn loop against the fake provider', () => {
  it('TURN-2 publishes every delta as it arrives and completes with usage', async () => {
    // Frames further apart than the transport's read-coalescing window are separate reads, so
    // separate deltas (the frames of one network read reach the engine as one delta, issue 22).
    h = await openSession([{ reasoning: 'hmm', text: 'Hello world', delayMs: 40, usage: { input: 20, output: 3 } }]);
    const result = await h.session.send('hi');
    expect(result).toMatchObject({ stopReason: 'completed', text: 'Hello world', modelCalls: 1, retries: 0 });
    expect(result.usage).toMatchObject({ inputTokens: 20, outputTokens: 3 });
    const deltas = h.events.filter((e) => e.type === 'text-delta');
    expect(deltas.length).toBe(2);
    expect(types(h)).toContain('reasoning-delta');
    expect(h.fake.requests).toHaveLength(1);
  });

  it('TURN-1 each round sends a snapshot of the context: system, user, and the tool round', async () => {
    h = await openSession([{ toolCalls: [{ id: 'c1', name: 'echo', arguments: { text: 'ping' } }] }, { text: 'done' }], {
      tools: [echoTool],
    });
    await h.session.send('use the tool');
    const second = h.fake.requests[1]?.body as { messages: Array<Record<string, unknown>>; tools: unknown[] };
    expect(second.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(second.messages[3]).toEqual({ role: 'tool', tool_call_id: 'c1', content: 'echo: ping' });
    expect(second.tools).toHaveLength(1);
  });

  it('TURN-4 loops through tool rounds until the candidate asks for no tools', async () => {
    h = await openSession(
      [
        { toolCalls: [{ id: 'a', name: 'echo', arguments: { text: '1' } }] },
        { toolCalls: [{ id: 'b', name: 'echo', arguments: { text: '2' } }] },
        { text: 'finished' },
      ],
      { tools: [echoTool] },
    );
    const result = await h.session.send('go');
    expect(result.stopReason).toBe('completed');
    expect(result.modelCalls).toBe(3);
    expect(result.toolCalls.map((c) => c.output)).toEqual(['echo: 1', 'echo: 2']);
  });

  it('TOOL-3 appends the exact tool results, in call order, to the transcript', async () => {
    h = await openSession(
      [
        {
          toolCalls: [
            { id: 'x', name: 'echo', arguments: { text: 'first' } },
            { id: 'y', name: 'echo', arguments: { text: 'second' } },
          ],
        },
        { text: 'ok' },
      ],
      { tools: [echoTool] },
    );
    await h.session.send('two calls');
    const tool = h.session.history().find((m) => m.role === 'tool');
    expect(tool?.content).toEqual([
      { type: 'tool-result', callId: 'x', name: 'echo', content: [{ type: 'text', text: 'echo: first' }], isError: false },
      { type: 'tool-result', callId: 'y', name: 'echo', content: [{ type: 'text', text: 'echo: second' }], isError: false },
    ]);
  });

  it('FIN-2 a length finish keeps the text, drops the tool calls without running them, stops output_truncated', async () => {
    let ran = 0;
    const counting = { ...echoTool, execute: async () => `${++ran}` };
    h = await openSession([{ text: 'partial', toolCalls: [{ name: 'echo', arguments: { text: 'x' } }], finish: 'length' }], {
      tools: [counting],
    });
    const result = await h.session.send('go');
    expect(result.stopReason).toBe('output_truncated');
    expect(ran).toBe(0);
    const assistant = h.session.history().find((m) => m.role === 'assistant');
    expect(assistant?.content).toEqual([{ type: 'text', text: 'partial' }]);
  });

  it('FIN-3 a content filter keeps the text and stops content_filtered', async () => {
    h = await openSession([{ text: 'some text', finish: 'content_filter' }]);
    const result = await h.session.send('go');
    expect(result).toMatchObject({ stopReason: 'content_filtered', text: 'some text' });
  });

  it("FIN-4 any other finish stops failed with Model stopped with finish reason '<raw>'.", async () => {
    h = await openSession([{ text: 'x', finish: 'SAFETY_RECITATION' }]);
    const result = await h.session.send('go');
    expect(result.stopReason).toBe('failed');
    expect(result.error?.message).toBe("Model stopped with finish reason 'SAFETY_RECITATION'.");
    expect(h.events).toContainEqual({ type: 'error', message: "Model stopped with finish reason 'SAFETY_RECITATION'." });
  });

  it('FIN-1 an abnormal finish stops before any tool runs', async () => {
    let ran = 0;
    const counting = { ...echoTool, execute: async () => `${++ran}` };
    h = await openSession([{ toolCalls: [{ name: 'echo', arguments: { text: 'x' } }], finish: 'pause_turn' }], {
      tools: [counting],
    });
    expect((await h.session.send('go')).stopReason).toBe('failed');
    expect(ran).toBe(0);
  });

  it('TOOL-2 a batch that does not fit the tool-call budget stops the turn and leaves the calls out', async () => {
    h = await openSession(
      [
        {
          text: 'calling two',
          toolCalls: [
            { id: 'a', name: 'echo', arguments: { text: '1' } },
            { id: 'b', name: 'echo', arguments: { text: '2' } },
          ],
        },
      ],
      { tools: [echoTool], config: { executionBudget: { maximumToolCalls: 1 } } },
    );
    const result = await h.session.send('go');
    expect(result.stopReason).toBe('tool_call_limit_reached');
    const parts = h.session.history().flatMap((m) => m.content.map((p) => p.type));
    expect(parts).not.toContain('tool-call');
    expect(parts).toContain('text');
  });

  it('BUDGET-7 the model-call budget stops the turn with model_call_limit_reached', async () => {
    h = await openSession(
      [{ toolCalls: [{ name: 'echo', arguments: { text: '1' } }] }, { toolCalls: [{ name: 'echo', arguments: { text: '2' } }] }],
      { tools: [echoTool], config: { executionBudget: { maximumModelCalls: 1 } } },
    );
    expect((await h.session.send('go')).stopReason).toBe('model_call_limit_reached');
    expect(h.fake.requests).toHaveLength(1);
  });

  it('FAIL-1 a failure that survives the retries stops failed and the user message is saved', async () => {
    // Six 503s: the first attempt and the five default retries all fail (RETRY-2), so the
    // failure survives the retries; the manual clock makes the backoff waits instant.
    h = await openSession(Array.from({ length: 6 }, () => ({ error: { status: 503, message: 'overloaded' } })));
    const result = await h.session.send('please remember me');
    expect(result.stopReason).toBe('failed');
    expect(result.retries).toBe(5);
    expect(h.fake.requests).toHaveLength(6);
    expect(result.error).toMatchObject({ status: 503, message: expect.stringContaining('overloaded') });
    expect(h.events.filter((e) => e.type === 'error')).toHaveLength(1);
    const saved = SessionFiles.load(h.home, h.session.id).state;
    expect(saved.archive[0]).toEqual({ role: 'user', content: [{ type: 'text', text: 'please remember me' }] });
    expect(readFileSync(sessionPath(h.home, h.session.id), 'utf8')).toContain('please remember me');
  });
});

describe('retry of one round', () => {
  it('RETRY-1 retries a 500 and a cut stream, then succeeds', async () => {
    h = await openSession([{ error: { status: 500 } }, { text: 'partial text', dropAfter: 2 }, { text: 'good' }]);
    const result = await h.session.send('go');
    expect(result).toMatchObject({ stopReason: 'completed', text: 'good', retries: 2 });
    expect(h.fake.requests).toHaveLength(3);
  });

  it('RETRY-2 default backoff is 2 s then 4 s with up to 25 % jitter, 5 retries at most', async () => {
    const clock = manualClock(1);
    h = await openSession(
      Array.from({ length: 7 }, () => ({ error: { status: 503 } })),
      { clock },
    );
    const result = await h.session.send('go');
    expect(result.stopReason).toBe('failed');
    expect(h.fake.requests).toHaveLength(6);
    expect(clock.sleeps).toEqual([2500, 5000, 10000, 20000, 30000]);
  });

  it('RETRY-2 the retry block of config.json sets cap and timing', async () => {
    const clock = manualClock(0);
    h = await openSession(
      Array.from({ length: 4 }, () => ({ error: { status: 500 } })),
      {
        clock,
        config: { retry: { maxRetries: 2, baseDelaySeconds: 1, backoffFactor: 3, jitter: 0, maxDelaySeconds: 60 } },
      },
    );
    await h.session.send('go');
    expect(clock.sleeps).toEqual([1000, 3000]);
    expect(h.fake.requests).toHaveLength(3);
  });

  it('RETRY-3 honours retry-after-ms and Retry-After', async () => {
    const clock = manualClock();
    h = await openSession(
      [
        { error: { status: 429, headers: { 'retry-after-ms': '300' } } },
        { error: { status: 429, headers: { 'retry-after': '45' } } },
        { text: 'ok' },
      ],
      { clock },
    );
    const result = await h.session.send('go');
    expect(result).toMatchObject({ stopReason: 'completed', retries: 2 });
    expect(clock.sleeps).toEqual([300, 45000]);
  });

  it('RETRY-4 publishes RetryScheduled with attempt, delay, reason and operator message', async () => {
    h = await openSession([
      { error: { status: 429, headers: { 'retry-after-ms': '1200' }, message: 'too_many_requests' } },
      { text: 'ok' },
    ]);
    await h.session.send('go');
    const retry = h.events.find((e) => e.type === 'retry-scheduled');
    expect(retry).toMatchObject({ attempt: 1, delayMs: 1200, reason: 'rate_limit', message: 'Too Many Requests' });
  });

  it('RETRY-5 live text of the failed attempt is discarded from the transcript', async () => {
    h = await openSession([{ text: 'doomed words here', dropAfter: 3 }, { text: 'clean answer' }]);
    const result = await h.session.send('go');
    expect(result.text).toBe('clean answer');
    const discardAt = types(h).indexOf('attempt-discarded');
    expect(discardAt).toBeGreaterThan(types(h).indexOf('text-delta'));
    const assistantText = h.session
      .history()
      .filter((m) => m.role === 'assistant')
      .flatMap((m) => m.content);
    expect(assistantText).toEqual([{ type: 'text', text: 'clean answer' }]);
  });

  it('RETRY-6 a 401 is not retried', async () => {
    h = await openSession([{ error: { status: 401 } }, { text: 'never' }]);
    const result = await h.session.send('go');
    expect(result).toMatchObject({ stopReason: 'failed', retries: 0 });
    expect(result.error?.kind).toBe('auth');
    expect(h.fake.requests).toHaveLength(1);
  });

  it('RETRY-8 a cancel interrupts a backoff wait at once', async () => {
    let release: () => void = () => {};
    const clock = {
      ...manualClock(),
      sleep: (_ms: number, signal: AbortSignal) =>
        new Promise<void>((_resolve, reject) => {
          release = () => reject(Object.assign(new Error('aborted'), { name: 'AbortError' }));
          if (signal.aborted) release();
          signal.addEventListener('abort', () => release(), { once: true });
        }),
    };
    h = await openSession([{ error: { status: 503 } }, { text: 'never' }], { clock });
    const harness = h;
    harness.session.on((event) => {
      if (event.type === 'retry-scheduled') setTimeout(() => harness.session.cancel(), 0);
    });
    const result = await harness.session.send('go');
    expect(result.stopReason).toBe('interrupted');
    expect(harness.fake.requests).toHaveLength(1);
  });
});

describe('the engine face', () => {
  it('RETRY-7 a connection closed while the request was sent is retried once at once, then reported', async () => {
    const clock = manualClock();
    h = await openSession([{ hangUpOnRequest: true }, { text: 'fresh connection' }], { clock });
    const ok = await h.session.send('go');
    expect(ok).toMatchObject({ stopReason: 'completed', text: 'fresh connection', retries: 1 });
    expect(clock.sleeps).toEqual([]);
    await h.close();
    h = await openSession([{ hangUpOnRequest: true }, { hangUpOnRequest: true }, { text: 'never' }], { clock: manualClock() });
    const failed = await h.session.send('go');
    expect(failed.stopReason).toBe('failed');
    expect(failed.error?.kind).toBe('body_write_closed');
    expect(h.fake.requests).toHaveLength(2);
  });

  it('TOOL-1 the whole batch goes through the executor with approval asked first for every call', async () => {
    const order: string[] = [];
    const tool = {
      ...echoTool,
      execute: async (input: unknown) => {
        order.push(`run ${(input as { text: string }).text}`);
        return 'ok';
      },
    };
    h = await openSession(
      [
        {
          toolCalls: [
            { id: 'a', name: 'echo', arguments: { text: '1' } },
            { id: 'b', name: 'echo', arguments: { text: '2' } },
          ],
        },
        { text: 'done' },
      ],
      {
        tools: [tool],
        policy: {
          decide: async (call) => {
            order.push(`ask ${call.id}`);
            return call.id === 'b' ? { allow: false, reason: 'no' } : { allow: true };
          },
        },
      },
    );
    const result = await h.session.send('go');
    expect(order).toEqual(['ask a', 'run 1', 'ask b']);
    expect(result.denied).toBe(true);
    expect(result.toolCalls.map((c) => c.status)).toEqual(['success', 'failure']);
  });

  it('CORE-3 the session owns its client and replaces it when the model changes', async () => {
    h = await openSession([{ text: 'one' }, { text: 'two' }], {
      config: {},
    });
    await h.session.send('first');
    expect(h.session.model).toBe('fake-model');
    await expect(h.session.switchModel('fake', 'no-such-model')).rejects.toThrow(/not in the catalog/);
    expect(h.session.model).toBe('fake-model');
  });

  it('CORE-4 every model call streams', async () => {
    h = await openSession([{ toolCalls: [{ name: 'echo', arguments: { text: '1' } }] }, { text: 'done' }], { tools: [echoTool] });
    await h.session.send('go');
    expect(h.fake.requests.map((r) => (r.body as { stream: boolean }).stream)).toEqual([true, true]);
  });
});

describe('reasoning replay state', () => {
  it('keeps one reasoning part per signed block, so each signature stays with its own text', async () => {
    const { FakeProvider, fakeConfig } = await import('@crystal/testkit');
    const { Session } = await import('../src/index.js');
    const { mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const fake = await FakeProvider.start({
      wire: 'anthropic',
      replies: [{ reasoning: 'block one', reasoningSignature: 'sig-1', text: 'answer' }],
    });
    try {
      const home = mkdtempSync(join(tmpdir(), 'crystal-reasoning-'));
      const config = fakeConfig(fake.baseUriFor('anthropic'), {}, 'anthropic');
      const session = await Session.open({ home, workspace: home, config: config as never, env: {}, thinking: 'high' });
      await session.send('think');
      const assistant = session.history().find((m) => m.role === 'assistant');
      expect(assistant?.content[0]).toEqual({
        type: 'reasoning',
        text: 'block one',
        state: { format: 'anthropic-thinking', data: 'sig-1' },
      });
      expect(assistant?.content[1]).toEqual({ type: 'text', text: 'answer' });
    } finally {
      await fake.close();
    }
  });
});
