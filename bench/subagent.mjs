/**
 * Figure (issue 20, AGENT-1): the overhead of a child agent that answers at once, against the
 * same answer returned by a plain in-process tool, in one process (engine dist, the fake
 * provider over HTTP), interleaved, medians. The child's turn costs its own model request by
 * nature; that request is measured alone in the same run (the same client, the same reply),
 * and the figure is what the child adds beyond it: the median over interleaved pairs of (child
 * turn − plain turn − lone request). Goal: the child's own request + at most 5 ms.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Session } from '../packages/engine/dist/index.js';
import { createChatClient } from '../packages/providers/dist/index.js';
import { FakeProvider, fakeConfig } from '../packages/testkit/dist/index.js';
import { median, printFigure, runCount } from './lib/harness.mjs';

const runs = runCount(25);
const round = (n, d = 2) => Math.round(n * 10 ** d) / 10 ** d;
const ANSWER = 'The answer is in src/answer.ts, line 42.';

const textOf = (m) =>
  typeof m?.content === 'string' ? m.content : Array.isArray(m?.content) ? m.content.map((p) => p.text ?? '').join('') : '';

// One server for the whole run: each request is answered by who sent it and where its turn is.
const fake = await FakeProvider.start({
  replyFor: ({ body }) => {
    const messages = body?.messages ?? [];
    if (textOf(messages[0]).includes('sub-agent') || textOf(messages.at(-1)) === 'direct') return { text: ANSWER };
    if (messages.at(-1)?.role === 'tool') return { text: 'done' };
    const plain = textOf(messages.find((m) => m.role === 'user')) === 'plain';
    return {
      toolCalls: [
        plain
          ? { id: 'p1', name: 'lookup', arguments: { question: 'where is the answer?' } }
          : { id: 't1', name: 'task', arguments: { description: 'find it', prompt: 'where is the answer?' } },
      ],
    };
  },
});
const config = fakeConfig(fake.baseUri);
const lookup = {
  name: 'lookup',
  description: 'Answers a question.',
  parameters: { type: 'object', properties: { question: { type: 'string' } } },
  execute: async () => ANSWER,
};

async function turn(kind, home) {
  const session = await Session.open({ home, workspace: home, config, env: {}, tools: [lookup], agents: true });
  try {
    const start = performance.now();
    const result = await session.send(kind);
    const ms = performance.now() - start;
    const output = result.toolCalls[0]?.output;
    if (result.stopReason !== 'completed' || output !== ANSWER)
      throw new Error(`${kind} turn went wrong: ${result.stopReason} ${output}`);
    return ms;
  } finally {
    session.release();
  }
}

const client = await createChatClient(
  { name: 'fake', protocol: 'openai', baseUri: fake.baseUri, apiKey: 'test-key' },
  { id: 'fake-model', contextWindow: 128000, maxTokens: 4096 },
);
async function request() {
  const start = performance.now();
  let text = '';
  const messages = [
    { role: 'system', content: [{ type: 'text', text: 'system' }] },
    { role: 'user', content: [{ type: 'text', text: 'direct' }] },
  ];
  for await (const event of client.stream({ messages }, new AbortController().signal))
    if (event.type === 'text-delta') text += event.text;
  if (text !== ANSWER) throw new Error(`direct request went wrong: ${text}`);
  return performance.now() - start;
}

const child = [];
const plain = [];
const requests = [];
/** Per interleaved pair: child turn − plain turn − the lone request (drift on a loaded machine cancels within a pair). */
const extras = [];
const home = mkdtempSync(join(tmpdir(), 'crystal-bench-agents-'));
try {
  for (let i = 0; i < runs + 2; i++) {
    const pair = {};
    for (const kind of i % 2 === 0 ? ['task', 'plain'] : ['plain', 'task']) pair[kind] = await turn(kind, home);
    const r = await request();
    if (i < 2) continue;
    child.push(pair.task);
    plain.push(pair.plain);
    requests.push(r);
    extras.push(pair.task - pair.plain - r);
  }
} finally {
  await fake.close();
  rmSync(home, { recursive: true, force: true });
}

const subject = median(child);
const baseline = median(plain);
const requestMs = median(requests);
const extra = median(extras);
printFigure({
  figure: 'turn whose answer comes from a child agent vs the same answer as a plain tool result',
  subject_ms: round(subject),
  baseline_ms: round(baseline),
  ratio: round(subject / baseline, 3),
  runs,
});
printFigure({
  figure: "child agent overhead beyond its own model request (the child's request measured alone)",
  extra_ms: round(extra),
  request_ms: round(requestMs),
  goal_ms: 5,
  met: extra <= 5,
  runs,
});
