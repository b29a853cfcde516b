import { type ChatMessage, systemMessage, userMessage } from '@crystal/core';
import { describe, expect, it } from 'vitest';
import { ContextMeter, estimateTokens } from '../src/index.js';

const reply = (text: string): ChatMessage => ({ role: 'assistant', content: [{ type: 'text', text }] });

describe('incremental context estimate', () => {
  it('COMPACT-1 follows the context as it grows and equals the full estimate', () => {
    const meter = new ContextMeter();
    const context: ChatMessage[] = [systemMessage('system prompt')];
    for (let i = 0; i < 50; i++) {
      context.push(userMessage(`question ${i} ${'x'.repeat(i * 7)}`), reply(`answer ${i}`));
      expect(meter.estimate(context)).toBe(estimateTokens(context));
    }
  });

  it('measures a rewritten context again (compaction replaces messages in place)', () => {
    const meter = new ContextMeter();
    const context: ChatMessage[] = [systemMessage('s'), userMessage('a'.repeat(4000)), reply('b')];
    expect(meter.estimate(context)).toBe(estimateTokens(context));
    context.splice(0, context.length, systemMessage('s'), systemMessage('## Earlier context\nshort'), reply('b'));
    expect(meter.estimate(context)).toBe(estimateTokens(context));
    const other = [systemMessage('different')];
    expect(meter.estimate(other)).toBe(estimateTokens(other));
  });
});
