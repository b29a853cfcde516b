import { type ChatMessage, type StreamingChatClient, systemMessage } from '@crystal/core';
import { createChatClient } from '@crystal/providers';
import { FakeProvider, type FakeReply } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CLEARED_RESULT_TEXT,
  type CompactInput,
  type CompactionRetry,
  compact,
  compactionLimit,
  PRUNED_RESULT_TEXT,
  summaryMessage,
} from '../src/compaction/index.js';
import { DEFAULT_RETRY } from '../src/retry-policy.js';
import { assistant, liveSystem, ofTokens, resultText, toolTurn, user } from './compaction-fixtures.js';
import { manualClock } from './helpers.js';

let fake: FakeProvider | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function clientFor(replies: FakeReply[]): Promise<StreamingChatClient> {
  fake = await FakeProvider.start({ replies, whenExhausted: 'error' });
  return createChatClient({ name: 'fake', protocol: 'openai', baseUri: fake.baseUri, apiKey: 'test-key' }, { id: 'fake-model' });
}

const ENV = '<env>\nWorkspace: /work/project\n</env>';

const SUMMARY = [
  '## Objective',
  '- Ship the parser.',
  '## Important Details',
  '(none)',
  '## Work State',
  '### Completed',
  '- Read the sources.',
  '### Active',
  '(none)',
  '### Blocked',
  '(none)',
  '## Next Move',
  '1. Run the tests.',
  '## Relevant Files',
  '- src/parser.ts: the parser.',
].join('\n');

function inputFor(
  client: StreamingChatClient,
  context: readonly ChatMessage[],
  extra: Partial<CompactInput> = {},
): CompactInput & { clock: ReturnType<typeof manualClock> } {
  return {
    context,
    client,
    contextWindow: 20_000,
    maxTokens: 4096,
    forced: false,
    retry: DEFAULT_RETRY,
    clock: manualClock(),
    signal: new AbortController().signal,
    envBlock: ENV,
    ...extra,
  } as CompactInput & { clock: ReturnType<typeof manualClock> };
}

interface WireBody {
  messages: Array<{ role: string; content: unknown }>;
  tools?: unknown;
}

const bodyOf = (index = 0): WireBody => fake?.requests[index]?.body as WireBody;

function wireText(content: unknown): string {
  if (typeof content === 'string') return content;
  return (content as Array<{ text?: string }>).map((part) => part.text ?? '').join('');
}

/** The conversation the summary request carried. */
function sentConversation(index = 0): string {
  const prompt = wireText(bodyOf(index).messages[1]?.content);
  const match = /^<conversation>\n([\s\S]*?)\n<\/conversation>/.exec(prompt);
  if (!match) throw new Error(`the summary prompt has no <conversation> block: ${prompt.slice(0, 200)}`);
  return match[1] as string;
}

/** The same message objects, in the same order (identity, not equality). */
function expectSameObjects(actual: readonly ChatMessage[], expected: readonly ChatMessage[]): void {
  expect(actual).toHaveLength(expected.length);
  expect(actual.map((message, i) => message === expected[i])).toEqual(expected.map(() => true));
}

/** Six tool turns of about 3,000 tokens each: over the 15,904-token limit of a 20,000 window. */
function longContext(): ChatMessage[] {
  const context = [liveSystem()];
  for (const id of ['t1', 't2', 't3', 't4', 't5', 't6']) context.push(...toolTurn(id, 3000));
  return context;
}

describe('compact() against the fake provider', () => {
  it('HIST-3 rebuilds the model context as live system, summary and recent tail; the input array is untouched', async () => {
    const client = await clientFor([{ text: SUMMARY, usage: { input: 900, output: 60 } }]);
    const context = longContext();
    const elements = [...context];
    const snapshot = structuredClone(context);
    const input = inputFor(client, context, { todos: '- [ ] finish the parser' });
    expect(compactionLimit(input)).toBe(15_904);

    const out = await compact(input);

    expect(out.outcome).toBe('applied');
    expect(out.summary).toBe(SUMMARY);
    expect(out.usage).toMatchObject({ inputTokens: 900, outputTokens: 60 });
    expect(out.context[0]).toBe(context[0]);
    expect(out.context[1]).toEqual(systemMessage(`## Earlier context\n${SUMMARY}\n\n## Open todos\n- [ ] finish the parser`));
    // Tail: the closing text of turn t5 (cut inside) and the whole of turn t6, as the same objects.
    const tail = context.slice(-5);
    expect(out.context.slice(2)).toHaveLength(5);
    expectSameObjects(out.context.slice(2), tail);
    expect(out.tokensAfter).toBeLessThan(compactionLimit(input));
    expect(out.tokensBefore).toBeGreaterThanOrEqual(compactionLimit(input));

    expect(context).toHaveLength(elements.length);
    expectSameObjects(context, elements);
    expect(context).toEqual(snapshot);

    // One request, without tools, from the summariser, with the head inside <conversation>.
    expect(fake?.requests).toHaveLength(1);
    const body = bodyOf();
    expect(body).not.toHaveProperty('tools');
    expect(body.messages.map((m) => m.role)).toEqual(['system', 'user']);
    const system = wireText(body.messages[0]?.content);
    expect(system).toContain('summarisation agent');
    expect(system.endsWith(ENV)).toBe(true);
    const conversation = sentConversation();
    expect(conversation.startsWith('[User]: turn t1\n[Assistant tool call]: read({"path":"t1.txt"})\n[Tool result]: ')).toBe(
      true,
    );
    expect(conversation).toContain(`${'x'.repeat(2000)}\n[truncated]`);
    expect(conversation).toContain('[User]: turn t5');
    expect(conversation).not.toContain('done t5');
    expect(conversation).not.toContain('t6');
    const prompt = wireText(body.messages[1]?.content);
    expect(prompt).toContain('## Work State\n### Completed');
    expect(prompt).toContain('<open-todos>\n- [ ] finish the parser\n</open-todos>');
    expect(prompt).not.toContain('<prior-summary>');
  });

  it('HIST-2 compaction never changes the archive, which shares the message objects, also when it prunes', async () => {
    const client = await clientFor([{ text: SUMMARY }]);
    const context = [liveSystem(), ...toolTurn('a', 30_000), ...toolTurn('b', 30_000), ...toolTurn('c', 25_000)];
    context.push(...toolTurn('d', 10), ...toolTurn('e', 10));
    const archive = context.slice(1);
    const elements = [...archive];
    const snapshot = structuredClone(archive);

    const out = await compact(
      inputFor(client, context, { contextWindow: 200_000, maxTokens: 32_000, lastReportedTokens: 170_000 }),
    );

    expect(out.outcome).toBe('applied');
    expect(out.prunedResults).toBe(2);
    expect(sentConversation().split(`[Tool result]: ${CLEARED_RESULT_TEXT}`)).toHaveLength(3);
    expect(archive).toEqual(snapshot);
    expectSameObjects(archive, elements);
    expect(resultText(archive[2])).toBe(ofTokens(30_000));
  });

  it('HIST-2 a failed summary still applies the pruned results to a new context and leaves the archive alone', async () => {
    const client = await clientFor([{ error: { status: 401, message: 'Invalid API key' } }]);
    const context = [liveSystem(), ...toolTurn('a', 30_000), ...toolTurn('b', 30_000), ...toolTurn('c', 25_000)];
    context.push(...toolTurn('d', 10), ...toolTurn('e', 10));
    const snapshot = structuredClone(context);

    const out = await compact(inputFor(client, context, { contextWindow: 200_000, maxTokens: 32_000, forced: true }));

    expect(out).toMatchObject({ outcome: 'applied', skipped: 'summary_failed', prunedResults: 2 });
    expect(out.error).toMatchObject({ kind: 'auth', status: 401 });
    expect(out.summary).toBeUndefined();
    expect(resultText(out.context[3])).toBe(PRUNED_RESULT_TEXT);
    expect(resultText(out.context[7])).toBe(PRUNED_RESULT_TEXT);
    expect(out.context[11]).toBe(context[11]);
    expect(context).toEqual(snapshot);
    expect(resultText(context[3])).toBe(ofTokens(30_000));
  });

  it('retries a 503 with the injected clock and the turn retry policy, publishing each scheduled retry', async () => {
    const client = await clientFor([{ error: { status: 503, message: 'Service Unavailable' } }, { text: SUMMARY }]);
    const retries: CompactionRetry[] = [];
    const input = inputFor(client, longContext(), { onRetry: (event) => retries.push(event) });

    const out = await compact(input);

    expect(out.outcome).toBe('applied');
    expect(out.retries).toBe(1);
    expect(input.clock.sleeps).toEqual([2000]);
    expect(retries).toEqual([
      { attempt: 1, delayMs: 2000, dueAt: 1_000_000 + 2000, reason: 'server', message: 'Provider is overloaded' },
    ]);
    expect(fake?.requests).toHaveLength(2);
    expect(fake?.requests[1]?.rawBody).toBe(fake?.requests[0]?.rawBody);
  });

  it('COMPACT-2 a summary request that fails without retry, with nothing pruned, is exhausted', async () => {
    const client = await clientFor([{ error: { status: 401, message: 'Invalid API key' } }]);
    const context = longContext();
    const input = inputFor(client, context);

    const out = await compact(input);

    expect(out).toMatchObject({ outcome: 'exhausted', skipped: 'summary_failed', prunedResults: 0, retries: 0 });
    expect(out.error).toMatchObject({ kind: 'auth', status: 401 });
    expect(out.context).toEqual(context);
    expect(out.context).not.toBe(context);
    expect(input.clock.sleeps).toEqual([]);
    expect(fake?.requests).toHaveLength(1);
  });

  it('COMPACT-2 a summary request that fails after its retries, with nothing pruned, is exhausted', async () => {
    const client = await clientFor([{ error: { status: 500, message: 'boom' } }, { error: { status: 500, message: 'boom' } }]);
    const input = inputFor(client, longContext(), { retry: { ...DEFAULT_RETRY, maxRetries: 1 } });

    const out = await compact(input);

    expect(out).toMatchObject({ outcome: 'exhausted', skipped: 'summary_failed', retries: 1 });
    expect(out.error).toMatchObject({ kind: 'server', status: 500 });
    expect(input.clock.sleeps).toEqual([2000]);
    expect(fake?.requests).toHaveLength(2);
  });

  it('REL-9 an item larger than the window is shortened to head and tail so the summary prompt fits (size guard)', async () => {
    const client = await clientFor([{ text: SUMMARY }]);
    // Window 3,000 with maxTokens 1,000: limit 2,000; the prompt must stay within 3,000 - 1,000 tokens.
    const context = [liveSystem(), user(ofTokens(3000)), assistant('ok'), user('next'), assistant('ok again')];

    const out = await compact(inputFor(client, context, { contextWindow: 3000, maxTokens: 1000 }));

    expect(out).toMatchObject({ outcome: 'applied', summary: SUMMARY });
    expect(fake?.requests).toHaveLength(1);
    expect(sentConversation()).toMatch(/characters left out/);
    expect(fake?.requests[0]?.rawBody.length).toBeLessThan(2000 * 4);
  });

  it('gives up on the summary without a request when even the shortened prompt would not fit (size guard)', async () => {
    const client = await clientFor([{ text: SUMMARY }]);
    // Window 1,100 with maxTokens 1,000: 100 tokens of room, less than the summary instructions alone.
    const context = [liveSystem(), user(ofTokens(3000)), assistant('ok'), user('next'), assistant('ok again')];

    const out = await compact(inputFor(client, context, { contextWindow: 1100, maxTokens: 1000 }));

    expect(out).toMatchObject({ outcome: 'exhausted', skipped: 'prompt_too_large' });
    expect(out.context).toEqual(context);
    expect(fake?.requests).toHaveLength(0);
  });

  it('leaves a context under the limit unchanged without a request', async () => {
    const client = await clientFor([{ text: SUMMARY }]);
    const context = [liveSystem(), user('first'), assistant('one'), user('second'), assistant('two')];
    const out = await compact(inputFor(client, context, { contextWindow: 128_000 }));
    expect(out).toMatchObject({ outcome: 'unchanged', skipped: 'under_limit' });
    expect(fake?.requests).toHaveLength(0);
  });

  it('COMPACT-4 a forced compaction summarises older turns at once, under the threshold, keeping the latest user turn', async () => {
    const client = await clientFor([{ text: SUMMARY }]);
    const context = [liveSystem(), user('first'), assistant('one'), user('second'), assistant('two')];

    const out = await compact(inputFor(client, context, { contextWindow: 128_000, forced: true }));

    expect(out.outcome).toBe('applied');
    expect(out.context).toEqual([context[0], systemMessage(`## Earlier context\n${SUMMARY}`), context[3], context[4]]);
    expect(sentConversation()).toBe('[User]: first\n[Assistant]: one');
  });

  it('a forced compaction with nothing before the latest user turn is unchanged (Nothing earlier to compact)', async () => {
    const client = await clientFor([{ text: SUMMARY }]);
    const context = [liveSystem(), summaryMessage('old work'), user('only'), assistant('one')];

    const out = await compact(inputFor(client, context, { forced: true }));

    expect(out).toMatchObject({ outcome: 'unchanged', skipped: 'nothing_earlier' });
    expect(out.context).toEqual(context);
    expect(fake?.requests).toHaveLength(0);
  });

  it('merges a previous summary (without its todos) and replaces it with the new one', async () => {
    const client = await clientFor([{ text: SUMMARY }]);
    const context = [
      liveSystem(),
      summaryMessage('## Objective\n- old goal', '- [ ] stale todo'),
      user('first'),
      assistant('one'),
    ];
    context.push(user('second'), assistant('two'));

    const out = await compact(inputFor(client, context, { contextWindow: 128_000, forced: true }));

    const prompt = wireText(bodyOf().messages[1]?.content);
    expect(prompt).toContain('<prior-summary>\n## Objective\n- old goal\n</prior-summary>');
    expect(prompt).not.toContain('stale todo');
    expect(sentConversation()).toBe('[User]: first\n[Assistant]: one');
    expect(out.context).toEqual([context[0], systemMessage(`## Earlier context\n${SUMMARY}`), context[4], context[5]]);
  });

  it('a cancel during the retry wait rejects with an AbortError and applies nothing', async () => {
    const client = await clientFor([{ error: { status: 503, message: 'Service Unavailable' } }, { text: SUMMARY }]);
    const controller = new AbortController();
    const context = longContext();
    const snapshot = structuredClone(context);
    const input = inputFor(client, context, { signal: controller.signal, onRetry: () => controller.abort() });

    await expect(compact(input)).rejects.toMatchObject({ name: 'AbortError' });
    expect(fake?.requests).toHaveLength(1);
    expect(context).toEqual(snapshot);
  });
});
