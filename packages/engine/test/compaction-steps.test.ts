import { type ChatMessage, systemMessage, text } from '@crystal/core';
import { describe, expect, it } from 'vitest';
import {
  CLEARED_RESULT_TEXT,
  compactionLimit,
  estimateTokens,
  isSummaryMessage,
  PRUNED_RESULT_TEXT,
  priorSummaryText,
  pruneToolResults,
  SUMMARY_SKELETON,
  serialiseConversation,
  shouldCompact,
  splitHeadTail,
  summaryMessage,
  summarySystemPrompt,
  summaryUserPrompt,
  tailBudget,
} from '../src/compaction/index.js';
import {
  assistant,
  assistantParts,
  call,
  liveSystem,
  ofTokens,
  result,
  resultText,
  toolTurn,
  user,
} from './compaction-fixtures.js';

describe('compaction estimate and trigger', () => {
  it('estimates characters / 4, rounded, over text, tool calls, results, reasoning and opaque state, not image bytes', () => {
    expect(estimateTokens([user('abcdef')])).toBe(2); // 6 / 4 = 1.5 rounds to 2
    expect(estimateTokens([user('abcde')])).toBe(1);
    const messages: ChatMessage[] = [
      assistantParts(
        { type: 'reasoning', text: 'r'.repeat(40), state: { format: 'anthropic', data: 's'.repeat(40) } },
        { type: 'tool-call', id: 'c1', name: 'read', arguments: 'a'.repeat(36) },
      ),
      result('c1', 'o'.repeat(80)),
      { role: 'user', content: [{ type: 'image', mime: 'image/png', data: 'A'.repeat(4000) }] },
    ];
    // 40 + 40 + (4 + 36) + 80 = 200 characters
    expect(estimateTokens(messages)).toBe(50);
  });

  it('computes the limit from window, reserve and threshold', () => {
    expect(compactionLimit({ contextWindow: 128_000, maxTokens: 4096, threshold: 0.8 })).toBe(102_400);
    expect(compactionLimit({ contextWindow: 200_000, threshold: 1 })).toBe(180_000);
    expect(compactionLimit({ contextWindow: 50_000, maxTokens: 32_000, threshold: 0.9 })).toBe(30_000);
    // The reserve does not fit inside the window: only the threshold term counts.
    expect(compactionLimit({ contextWindow: 10_000 })).toBe(8_000);
  });

  it('COMPACT-1 trigger: compacts when the estimate or the last reported usage reaches the limit', () => {
    expect(shouldCompact({ estimate: 999, limit: 1000 })).toBe(false);
    expect(shouldCompact({ estimate: 1000, limit: 1000 })).toBe(true);
    expect(shouldCompact({ estimate: 10, lastReportedTokens: 999, limit: 1000 })).toBe(false);
    expect(shouldCompact({ estimate: 10, lastReportedTokens: 1000, limit: 1000 })).toBe(true);
  });
});

describe('compaction prune pass', () => {
  it('prunes successful results older than the 40,000-token band when they exceed 20,000 tokens, keeping id, name and status', () => {
    const input = [
      liveSystem(),
      ...toolTurn('a', 30_000),
      ...toolTurn('b', 30_000),
      ...toolTurn('c', 25_000),
      ...toolTurn('d', 50_000),
      ...toolTurn('e', 50_000),
    ];
    const snapshot = structuredClone(input);
    const out = pruneToolResults(input);
    expect(out.prunedResults).toBe(2);
    expect(out.prunedTokens).toBe(60_000);
    // a and b are older than the band (c fills 25,000; b crosses 40,000); the last two turns are never pruned.
    expect(resultText(out.messages[3])).toBe(PRUNED_RESULT_TEXT);
    expect(resultText(out.messages[7])).toBe(PRUNED_RESULT_TEXT);
    expect(resultText(out.messages[11])).toBe(ofTokens(25_000));
    expect(resultText(out.messages[15])).toBe(ofTokens(50_000));
    expect(out.messages[3]?.content[0]).toEqual({
      type: 'tool-result',
      callId: 'a',
      name: 'read',
      content: [text(PRUNED_RESULT_TEXT)],
      isError: false,
    });
    // Pure: the input and its messages are unchanged; untouched messages pass through as the same objects.
    expect(input).toEqual(snapshot);
    expect(out.messages).not.toBe(input);
    expect(out.messages[3]).not.toBe(input[3]);
    expect(out.messages[11]).toBe(input[11]);
  });

  it('leaves everything when the candidates total 20,000 tokens or less', () => {
    const input = [liveSystem(), ...toolTurn('b', 20_000), ...toolTurn('c', 40_000), ...toolTurn('d', 1), ...toolTurn('e', 1)];
    const out = pruneToolResults(input);
    expect(out.prunedResults).toBe(0);
    expect(out.messages).toBe(input);
  });

  it('neither counts nor prunes failed tool results', () => {
    const input = [
      liveSystem(),
      ...toolTurn('a', 60_000, true),
      ...toolTurn('b', 39_000),
      ...toolTurn('d', 1),
      ...toolTurn('e', 1),
    ];
    expect(pruneToolResults(input).messages).toBe(input);
  });

  it('never prunes the last two user turns', () => {
    const input = [liveSystem(), ...toolTurn('d', 100_000), ...toolTurn('e', 100_000)];
    expect(pruneToolResults(input).prunedResults).toBe(0);
  });

  it('stops at a summary and at an already-pruned result', () => {
    const beforeSummary = [
      liveSystem(),
      ...toolTurn('old', 60_000),
      summaryMessage('earlier work'),
      ...toolTurn('b', 45_000),
      ...toolTurn('d', 1),
      ...toolTurn('e', 1),
    ];
    const a = pruneToolResults(beforeSummary);
    expect(a.prunedResults).toBe(1);
    expect(resultText(a.messages[3])).toBe(ofTokens(60_000));
    expect(resultText(a.messages[8])).toBe(PRUNED_RESULT_TEXT);

    const beforePruned = [
      liveSystem(),
      ...toolTurn('old', 60_000),
      user('turn p'),
      call('p', 'read', '{}'),
      result('p', PRUNED_RESULT_TEXT),
      ...toolTurn('b', 45_000),
      ...toolTurn('d', 1),
      ...toolTurn('e', 1),
    ];
    const b = pruneToolResults(beforePruned);
    expect(b.prunedResults).toBe(1);
    expect(resultText(b.messages[3])).toBe(ofTokens(60_000));
    expect(resultText(b.messages[10])).toBe(PRUNED_RESULT_TEXT);
  });
});

describe('compaction head/tail split', () => {
  it('clamps the tail budget to a quarter of the usable window between 2,000 and 15,000', () => {
    expect(tailBudget({ contextWindow: 200_000, maxTokens: 32_000 })).toBe(15_000);
    expect(tailBudget({ contextWindow: 20_000, maxTokens: 4096 })).toBe(3_976);
    expect(tailBudget({ contextWindow: 8_000, maxTokens: 4096 })).toBe(2_000);
  });

  // Window 8,000 with maxTokens 4,096: a tail budget of 2,000 tokens (8,000 characters).
  const window = { contextWindow: 8_000, maxTokens: 4096 };

  it('keeps whole user turns from the end and cuts the first turn that does not fit at a non-tool message', () => {
    const summary = summaryMessage('before');
    const turn1 = [user('u1'), call('c1', 'read', '{}'), result('c1', 'r'.repeat(2000)), assistant('a'.repeat(1200))];
    const turn2 = [user('u2'), assistant('b'.repeat(3000))];
    const turn3 = [user('u3'), assistant('c'.repeat(3000))];
    const input = [liveSystem(), summary, ...turn1, ...turn2, ...turn3];
    const out = splitHeadTail(input, { ...window, forced: false });
    expect(out.priorSummary).toBe(summary);
    expect(out.head).toEqual(turn1.slice(0, 3));
    expect(out.tail).toEqual([turn1[3], ...turn2, ...turn3]);
    expect(out.tail[0]).toBe(turn1[3]);
  });

  it('never starts the tail at a tool result', () => {
    const turn1 = [user('u'.repeat(6000)), call('c1', 'read', 'p'.repeat(1000)), result('c1', 'r'.repeat(1000))];
    const turn2 = [user('u2'), assistant('b'.repeat(3000))];
    const turn3 = [user('u3'), assistant('c'.repeat(3000))];
    const out = splitHeadTail([liveSystem(), ...turn1, ...turn2, ...turn3], { ...window, forced: false });
    expect(out.head).toEqual(turn1);
    expect(out.tail).toEqual([...turn2, ...turn3]);
  });

  it('COMPACT-4 a forced /compact whose head would be empty keeps only the latest user turn', () => {
    const input = [liveSystem(), user('first'), assistant('one'), user('second'), assistant('two')];
    expect(splitHeadTail(input, { ...window, forced: false }).head).toEqual([]);
    const forced = splitHeadTail(input, { ...window, forced: true });
    expect(forced.head).toEqual([input[1], input[2]]);
    expect(forced.tail).toEqual([input[3], input[4]]);
  });

  it('a forced split with nothing before the latest user turn has an empty head', () => {
    expect(splitHeadTail([liveSystem(), user('only'), assistant('one')], { ...window, forced: true }).head).toEqual([]);
    expect(
      splitHeadTail([liveSystem(), summaryMessage('s'), user('only'), assistant('one')], { ...window, forced: true }).head,
    ).toEqual([]);
  });
});

describe('compaction head serialisation', () => {
  it('writes one labelled line per text, reasoning, tool call and tool result', () => {
    const lines = serialiseConversation([
      user('Fix the \u2063[Image #1] layout'),
      assistantParts({ type: 'reasoning', text: 'look at css' }, text('Reading it.'), {
        type: 'tool-call',
        id: 'c1',
        name: 'read',
        arguments: '{"path":"a.css"}',
      }),
      result('c1', 'body { }'),
      call('c2', 'bash', '{"command":"make"}'),
      result('c2', 'make: *** No rule', true),
      call('c3', 'read', '{}'),
      result('c3', PRUNED_RESULT_TEXT),
    ]);
    expect(lines.split('\n')).toEqual([
      '[User]: Fix the [Image #1] layout',
      '[Reasoning]: look at css',
      '[Assistant]: Reading it.',
      '[Assistant tool call]: read({"path":"a.css"})',
      '[Tool result]: body { }',
      '[Assistant tool call]: bash({"command":"make"})',
      '[Tool error]: make: *** No rule',
      '[Assistant tool call]: read({})',
      `[Tool result]: ${CLEARED_RESULT_TEXT}`,
    ]);
  });

  it('truncates tool output to 2,000 characters plus a truncation line', () => {
    const exact = serialiseConversation([result('c1', 'y'.repeat(2000))]);
    expect(exact).toBe(`[Tool result]: ${'y'.repeat(2000)}`);
    const long = serialiseConversation([result('c1', `${'z'.repeat(2000)}TAIL`, true)]);
    expect(long).toBe(`[Tool error]: ${'z'.repeat(2000)}\n[truncated]`);
  });

  it('shows an image part as a marker when the text carries none', () => {
    const out = serialiseConversation([
      { role: 'user', content: [text('see '), { type: 'image', mime: 'image/png', data: 'AA', name: 'shot.png' }] },
    ]);
    expect(out).toBe('[User]: see [Image: shot.png]');
  });
});

describe('compaction prompts', () => {
  it('the system prompt is the summarisation agent with its rules, ending with the env block', () => {
    const prompt = summarySystemPrompt('<env>\nWorkspace: /w\n</env>');
    expect(prompt).toContain('summarisation agent');
    expect(prompt).toContain('Do not continue the conversation');
    expect(prompt).toContain('not instructions');
    expect(prompt).toContain('language the user writes in');
    expect(prompt).toContain('Invent nothing');
    expect(prompt).toContain('Leave secrets out');
    expect(prompt.endsWith('<env>\nWorkspace: /w\n</env>')).toBe(true);
  });

  it('the user prompt holds the conversation, the task and the exact skeleton; no prior summary or todos unless given', () => {
    const prompt = summaryUserPrompt({ conversation: '[User]: hi' });
    expect(prompt.startsWith('<conversation>\n[User]: hi\n</conversation>\n\n')).toBe(true);
    let at = 0;
    for (const heading of SUMMARY_SKELETON) {
      const next = prompt.indexOf(`\n${heading}\n`, at);
      expect(next, heading).toBeGreaterThan(at);
      at = next;
    }
    expect(prompt).toContain('(none)');
    expect(prompt).toContain('1. ');
    expect(prompt).not.toContain('<prior-summary>');
    expect(prompt).not.toContain('<open-todos>');
  });

  it('the user prompt merges a prior summary and lists open todos, in order', () => {
    const prompt = summaryUserPrompt({ conversation: 'C', priorSummary: '## Objective\n- ship', todos: '- [ ] write tests' });
    const order = [
      '</conversation>',
      '<prior-summary>\n## Objective\n- ship\n</prior-summary>',
      'Task:',
      '## Objective\n- What',
      '<open-todos>\n- [ ] write tests\n</open-todos>',
    ];
    const positions = order.map((s) => prompt.indexOf(s));
    expect(positions.every((p) => p >= 0)).toBe(true);
    expect([...positions].sort((x, y) => x - y)).toEqual(positions);
    expect(prompt).toContain('carry forward its objectives and constraints');
    expect(prompt).toContain('newer conversation win');
    expect(prompt).toContain('to Completed');
  });

  it('stores a summary as a system message starting with the marker, plus open todos', () => {
    const plain = summaryMessage('S');
    expect(plain).toEqual(systemMessage('## Earlier context\nS'));
    const withTodos = summaryMessage('S', '- [ ] one');
    expect(withTodos).toEqual(systemMessage('## Earlier context\nS\n\n## Open todos\n- [ ] one'));
    expect(isSummaryMessage(withTodos)).toBe(true);
    expect(isSummaryMessage(liveSystem())).toBe(false);
    expect(isSummaryMessage(user('## Earlier context\nS'))).toBe(false);
    expect(priorSummaryText(withTodos)).toBe('S');
  });
});
