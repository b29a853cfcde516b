import { describe, expect, it } from 'vitest';
import { type ParsedToolCall, RunBudget, type ToolDefinition, ToolExecutor } from '../src/index.js';

const echo: ToolDefinition = {
  name: 'echo',
  description: 'Echo the text',
  parameters: { type: 'object', properties: { text: { type: 'string' } } },
  execute: async (input) => `echo: ${(input as { text: string }).text}`,
};
const boom: ToolDefinition = {
  name: 'boom',
  description: 'Always throws',
  parameters: { type: 'object' },
  execute: async () => {
    throw new Error('disk on fire');
  },
};
const call = (id: string, name: string, args: string): ParsedToolCall => {
  let input: unknown;
  try {
    input = JSON.parse(args);
  } catch {
    input = undefined;
  }
  return { id, name, arguments: args, input };
};
const signal = new AbortController().signal;

describe('ToolExecutor', () => {
  it('CORE-1 runs a batch in call order and returns one result per call', async () => {
    const executor = new ToolExecutor({ tools: [echo] });
    const results = await executor.runBatch([call('a', 'echo', '{"text":"one"}'), call('b', 'echo', '{"text":"two"}')], signal);
    expect(results.map((r) => [r.callId, r.content])).toEqual([
      ['a', [{ type: 'text', text: 'echo: one' }]],
      ['b', [{ type: 'text', text: 'echo: two' }]],
    ]);
    expect(executor.specs.map((s) => s.name)).toEqual(['echo']);
  });

  it('CORE-5 a policy rejection is a framework-written result and the tool never runs', async () => {
    let ran = false;
    const spy: ToolDefinition = {
      ...echo,
      execute: async () => {
        ran = true;
        return 'ran';
      },
    };
    const executor = new ToolExecutor({ tools: [spy], policy: { decide: async () => ({ allow: false, reason: 'not now' }) } });
    const [result] = await executor.runBatch([call('a', 'echo', '{"text":"x"}')], signal);
    expect(ran).toBe(false);
    expect(result?.isError).toBe(true);
    expect(result?.content).toEqual([{ type: 'text', text: "The operator denied the 'echo' call: not now" }]);
  });

  it('CORE-5 a tool exception reaches the model only through the exception mapper', async () => {
    const executor = new ToolExecutor({ tools: [boom], mapException: (error) => `mapped: ${(error as Error).message}` });
    const [result] = await executor.runBatch([call('a', 'boom', '{}')], signal);
    expect(result).toMatchObject({ isError: true, content: [{ type: 'text', text: 'mapped: disk on fire' }] });
  });

  it('unknown tools and invalid argument JSON become error results, not throws', async () => {
    const executor = new ToolExecutor({ tools: [echo] });
    const [unknown, invalid] = await executor.runBatch([call('a', 'nope', '{}'), call('b', 'echo', '{"text":')], signal);
    expect(unknown?.content[0]).toMatchObject({ text: expect.stringContaining("Unknown tool 'nope'") });
    expect(invalid?.content[0]).toMatchObject({ text: expect.stringContaining('not valid JSON') });
  });
});

describe('ToolExecutor parallel calls (AGENT-3)', () => {
  /** A tool whose calls wait for the test to release them, recording how many run at once. */
  const gated = (name: string, parallel: boolean) => {
    const log: string[] = [];
    let running = 0;
    let peak = 0;
    const waiting: Array<() => void> = [];
    const tool: ToolDefinition = {
      name,
      description: name,
      parameters: { type: 'object' },
      parallel,
      execute: async (_input, { callId }) => {
        running++;
        peak = Math.max(peak, running);
        log.push(`start ${callId}`);
        await new Promise<void>((r) => waiting.push(r));
        running--;
        log.push(`end ${callId}`);
        return callId;
      },
    };
    return {
      tool,
      log,
      peak: () => peak,
      release: () => {
        for (const r of waiting.splice(0)) r();
      },
    };
  };
  const settle = () => new Promise((r) => setImmediate(r));

  it('AGENT-3 neighbouring calls of a parallel tool start together up to parallelLimit; results keep call order', async () => {
    const task = gated('task', true);
    const executor = new ToolExecutor({ tools: [task.tool], parallelLimit: 2 });
    const batch = executor.runBatch([call('a', 'task', '{}'), call('b', 'task', '{}'), call('c', 'task', '{}')], signal);
    await settle();
    expect(task.log).toEqual(['start a', 'start b']);
    task.release();
    await settle();
    expect(task.log.slice(2)).toEqual(['end a', 'end b', 'start c']);
    task.release();
    const results = await batch;
    expect(results.map((r) => r.callId)).toEqual(['a', 'b', 'c']);
    expect(task.peak()).toBe(2);
  });

  it('AGENT-3 other tools in the batch still run in order, before and after the parallel run', async () => {
    const task = gated('task', true);
    const plain = gated('plain', false);
    const executor = new ToolExecutor({ tools: [task.tool, plain.tool], parallelLimit: 3 });
    const batch = executor.runBatch(
      [call('p1', 'plain', '{}'), call('t1', 'task', '{}'), call('t2', 'task', '{}'), call('p2', 'plain', '{}')],
      signal,
    );
    await settle();
    expect([...plain.log, ...task.log]).toEqual(['start p1']);
    plain.release();
    await settle();
    expect(task.log).toEqual(['start t1', 'start t2']);
    expect(plain.log).toEqual(['start p1', 'end p1']);
    task.release();
    await settle();
    expect(plain.log.at(-1)).toBe('start p2');
    plain.release();
    expect((await batch).map((r) => r.callId)).toEqual(['p1', 't1', 't2', 'p2']);
  });

  it('AGENT-3 without parallelLimit a parallel tool runs one call at a time', async () => {
    const task = gated('task', true);
    const batch = new ToolExecutor({ tools: [task.tool] }).runBatch([call('a', 'task', '{}'), call('b', 'task', '{}')], signal);
    await settle();
    expect(task.log).toEqual(['start a']);
    task.release();
    await settle();
    task.release();
    await batch;
    expect(task.peak()).toBe(1);
  });
});

describe('RunBudget', () => {
  it('BUDGET-2 counts model calls when attempted and stops at the limit', () => {
    let now = 0;
    const budget = new RunBudget({ maxModelCalls: 2, maxToolCalls: 3, maxDurationMs: 100 }, () => now);
    expect(budget.beforeModelCall()).toBeNull();
    budget.modelCalls = 2;
    expect(budget.beforeModelCall()).toBe('model_call_limit_reached');
    expect(budget.fitsToolBatch(3)).toBe(true);
    expect(budget.fitsToolBatch(4)).toBe(false);
    budget.modelCalls = 0;
    now = 100;
    expect(budget.beforeModelCall()).toBe('duration_limit_reached');
  });
});
