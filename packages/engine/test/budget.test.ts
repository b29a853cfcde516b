import { DEFAULT_RUN_LIMITS, type ToolDefinition } from '@crystal/core';
import { afterEach, describe, expect, it } from 'vitest';
import { budgetLimitsOf, type Config, ConfigError, parseConfigText } from '../src/index.js';
import { echoTool, type Harness, manualClock, openSession } from './helpers.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const parse = (budget: unknown): Config =>
  parseConfigText(JSON.stringify({ executionBudget: budget }, null, 2), '/home/config.json');

function budgetError(budget: unknown): ConfigError {
  try {
    parse(budget);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('executionBudget', () => {
  it('BUDGET-2 defaults are 1024 model calls, 8192 tool calls and 7 days', () => {
    expect(budgetLimitsOf({})).toEqual({ maxModelCalls: 1024, maxToolCalls: 8192, maxDurationMs: 604_800_000 });
    expect(DEFAULT_RUN_LIMITS.maxDurationMs).toBe(7 * 24 * 3600 * 1000);
  });

  it('BUDGET-3 "unlimited" lifts all three limits; an object sets any of the three fields', () => {
    expect(budgetLimitsOf(parse('unlimited'))).toEqual({ maxModelCalls: null, maxToolCalls: null, maxDurationMs: null });
    expect(budgetLimitsOf(parse({ maximumModelCalls: 5, maximumToolCalls: 6, maximumDurationSeconds: 7 }))).toEqual({
      maxModelCalls: 5,
      maxToolCalls: 6,
      maxDurationMs: 7000,
    });
  });

  it('BUDGET-4 an omitted field keeps its default and null removes that limit', () => {
    expect(budgetLimitsOf(parse({ maximumModelCalls: null }))).toEqual({
      maxModelCalls: null,
      maxToolCalls: 8192,
      maxDurationMs: 604_800_000,
    });
  });

  it('BUDGET-5 zero model calls, zero duration, negative tool calls and a duration past the timer are errors naming the field', () => {
    expect(budgetError({ maximumModelCalls: 0 }).keyPath).toBe('executionBudget.maximumModelCalls');
    expect(budgetError({ maximumDurationSeconds: 0 }).keyPath).toBe('executionBudget.maximumDurationSeconds');
    expect(budgetError({ maximumToolCalls: -1 }).keyPath).toBe('executionBudget.maximumToolCalls');
    const tooLong = budgetError({ maximumDurationSeconds: 2147484 });
    expect(tooLong.keyPath).toBe('executionBudget.maximumDurationSeconds');
    expect(tooLong.message).toContain('2147483');
    expect(budgetError({ maximumModelCalls: 1.5 }).message).toMatch(/integer|int/);
    expect(budgetError('lots').keyPath).toBe('executionBudget');
    expect(budgetLimitsOf(parse({ maximumToolCalls: 0 })).maxToolCalls).toBe(0);
  });

  it('BUDGET-5 a tool-call budget of 0 lets no tool run', async () => {
    let ran = 0;
    const counting: ToolDefinition = { ...echoTool, execute: async () => `${++ran}` };
    h = await openSession([{ toolCalls: [{ name: 'echo', arguments: { text: 'x' } }] }], {
      tools: [counting],
      config: { executionBudget: { maximumToolCalls: 0 } },
    });
    expect((await h.session.send('go')).stopReason).toBe('tool_call_limit_reached');
    expect(ran).toBe(0);
  });

  it('BUDGET-6 a turn with no limits still ends on model completion', async () => {
    h = await openSession([{ toolCalls: [{ name: 'echo', arguments: { text: '1' } }] }, { text: 'done' }], {
      tools: [echoTool],
      config: { executionBudget: 'unlimited' },
    });
    expect((await h.session.send('go')).stopReason).toBe('completed');
  });

  it('BUDGET-7 the duration budget stops a running tool batch with duration_limit_reached', async () => {
    const clock = manualClock();
    let sawAbort = false;
    const slow: ToolDefinition = {
      ...echoTool,
      execute: (_input, context) =>
        new Promise((_resolve, reject) => {
          context.signal.addEventListener('abort', () => {
            sawAbort = true;
            reject(new Error('stopped'));
          });
          clock.advance(6000);
        }),
    };
    h = await openSession([{ toolCalls: [{ name: 'echo', arguments: { text: 'x' } }] }, { text: 'never' }], {
      tools: [slow],
      clock,
      config: { executionBudget: { maximumDurationSeconds: 5 } },
    });
    const result = await h.session.send('go');
    expect(result.stopReason).toBe('duration_limit_reached');
    expect(sawAbort).toBe(true);
    expect(h.fake.requests).toHaveLength(1);
  });

  it('BUDGET-7 a retry wait longer than the remaining duration stops with duration_limit_reached', async () => {
    h = await openSession([{ error: { status: 429, headers: { 'retry-after': '60' } } }, { text: 'never' }], {
      config: { executionBudget: { maximumDurationSeconds: 10 } },
    });
    expect((await h.session.send('go')).stopReason).toBe('duration_limit_reached');
    expect(h.fake.requests).toHaveLength(1);
  });

  it('BUDGET-1 text turns and image-capable turns share the same budget', async () => {
    h = await openSession([{ toolCalls: [{ name: 'echo', arguments: { text: '1' } }] }, { text: 'x' }], {
      tools: [echoTool],
      config: { executionBudget: { maximumModelCalls: 1 } },
    });
    expect((await h.session.send('text turn')).stopReason).toBe('model_call_limit_reached');
    await h.close();
    h = await openSession([{ toolCalls: [{ name: 'echo', arguments: { text: '1' } }] }, { text: 'x' }], {
      tools: [echoTool],
      imageInput: true,
      config: { executionBudget: { maximumModelCalls: 1 } },
    });
    expect(h.session.imageInput).toBe(true);
    expect((await h.session.send('image-capable turn')).stopReason).toBe('model_call_limit_reached');
  });

  // The rule (issue 14 item 6): every HTTP request to the model is one model call, retries
  // included; the budget is asked before each request, and when it is spent the turn stops
  // with model_call_limit_reached, also when the failure before it would have been retried.
  it('BUDGET-7 RETRY-1 maximumModelCalls 2 with two 503s stops with model_call_limit_reached, not failed; retries count', async () => {
    h = await openSession(
      [{ error: { status: 503, message: 'overloaded' } }, { error: { status: 503, message: 'overloaded' } }, { text: 'never' }],
      { config: { executionBudget: { maximumModelCalls: 2 } } },
    );
    const result = await h.session.send('go');
    expect(result.stopReason).toBe('model_call_limit_reached');
    expect(result.modelCalls).toBe(2);
    expect(result.retries).toBe(1);
    expect(result.error?.message).toContain('overloaded');
    expect(result.error?.status).toBe(503);
    expect(h.fake.requests).toHaveLength(2);
    expect(h.events.filter((e) => e.type === 'retry-scheduled')).toHaveLength(1);
  });

  it('BUDGET-7 RETRY-1 a retry that succeeds within the budget counts as a model call', async () => {
    h = await openSession([{ error: { status: 503, message: 'overloaded' } }, { text: 'made it' }], {
      config: { executionBudget: { maximumModelCalls: 2 } },
    });
    const result = await h.session.send('go');
    expect(result).toMatchObject({ stopReason: 'completed', text: 'made it', modelCalls: 2, retries: 1 });
  });

  it('BUDGET-7 RETRY-7 the immediate retry of a closed connection is also a model call the budget refuses', async () => {
    h = await openSession([{ hangUpOnRequest: true }, { text: 'never' }], {
      config: { executionBudget: { maximumModelCalls: 1 } },
    });
    const result = await h.session.send('go');
    expect(result.stopReason).toBe('model_call_limit_reached');
    expect(result.error?.kind).toBe('body_write_closed');
    expect(h.fake.requests).toHaveLength(1);
  });
});
