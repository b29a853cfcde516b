import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ParsedToolCall, ToolExecutor } from '@crystal/core';
import { afterEach, describe, expect, it } from 'vitest';
import { catalogFor, createBuiltinTools, PLAN_TOOLS, WORK_TOOLS } from '../src/tools/catalog.js';
import {
  builtinExceptionMapper,
  DISMISSED,
  type Question,
  type ToolHost,
  TodoStore,
  ToolFailure,
} from '../src/tools/builtin/index.js';
import { echoTool, type Harness, openSession } from './helpers.js';

function host(overrides: Partial<ToolHost> = {}): ToolHost {
  return { workspace: mkdtempSync(join(tmpdir(), 'crystal-cat-')), bashTimeoutMs: null, todos: new TodoStore(), ...overrides };
}

async function call(h: ToolHost, name: string, input: unknown) {
  const executor = new ToolExecutor({ tools: createBuiltinTools(h), mapException: builtinExceptionMapper });
  const parsed: ParsedToolCall = { id: 'c1', name, arguments: JSON.stringify(input), input };
  const [result] = await executor.runBatch([parsed], new AbortController().signal);
  return { text: result?.content.map((p) => (p.type === 'text' ? p.text : '')).join('') ?? '', isError: result?.isError };
}

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe('catalogs', () => {
  it('TOOLS-1 Plan has read, list, glob, grep, todowrite, todoread, question; Work adds edit, write, bash', () => {
    const tools = createBuiltinTools(host());
    expect(catalogFor('plan', tools).map((t) => t.name)).toEqual([
      'read',
      'list',
      'glob',
      'grep',
      'todowrite',
      'todoread',
      'question',
    ]);
    expect(catalogFor('work', tools).map((t) => t.name)).toEqual([
      'read',
      'list',
      'glob',
      'grep',
      'todowrite',
      'todoread',
      'question',
      'edit',
      'write',
      'bash',
    ]);
    expect(PLAN_TOOLS).toHaveLength(7);
    expect(WORK_TOOLS).toHaveLength(10);
  });

  it('TOOLS-1 tools that are not built in pass through either catalog in their place', () => {
    const tools = [...createBuiltinTools(host()), echoTool];
    expect(catalogFor('plan', tools).at(-1)?.name).toBe('echo');
    expect(catalogFor('work', tools).at(-1)?.name).toBe('echo');
  });

  it('TOOLS-1 every built-in tool declares an object schema with a description for the model', () => {
    for (const tool of createBuiltinTools(host())) {
      expect(tool.description.length, tool.name).toBeGreaterThan(20);
      expect((tool.parameters as { type: string }).type, tool.name).toBe('object');
    }
  });

  it('TOOLS-1 Plan and Work catalogs go over the wire, and a write then read round trip works in a real turn', async () => {
    const h0 = host();
    const mutable = h0 as { workspace: string };
    harness = await openSession(
      [
        { toolCalls: [{ id: 'w', name: 'write', arguments: { path: 'notes/a.txt', contents: 'hello\n' } }] },
        { toolCalls: [{ id: 'r', name: 'read', arguments: { path: 'notes/a.txt' } }] },
        { text: 'done' },
      ],
      { tools: catalogFor('work', createBuiltinTools(h0)) },
    );
    mutable.workspace = harness.home;
    const result = await harness.session.send('write and read');
    expect(result.stopReason).toBe('completed');
    expect(readFileSync(join(harness.home, 'notes/a.txt'), 'utf8')).toBe('hello\n');
    const third = harness.fake.requests[2]?.body as {
      messages: Array<{ role: string; content: unknown }>;
      tools: Array<{ function: { name: string } }>;
    };
    const toolMessages = third.messages.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(String(toolMessages[0])).toMatch(/^Created notes\/a\.txt \(6 characters\)\./);
    expect(toolMessages[1]).toBe('     1|hello');
    expect(third.tools.map((t) => t.function.name)).toEqual(WORK_TOOLS);
  });
});

describe('todos', () => {
  it('TOOLS-1 todowrite replaces the list, accepts the status spellings and returns the formatted list', async () => {
    const h = host();
    const result = await call(h, 'todowrite', {
      todos: [
        { id: '1', content: 'Read the code', status: 'completed' },
        { id: '2', content: 'Write the test', status: 'in-progress' },
        { id: '3', content: 'Fix the bug', status: 'pending' },
        { id: '4', content: 'Old idea', status: 'canceled' },
        { id: '5', content: 'Ship', status: 'complete' },
      ],
    });
    expect(result).toEqual({
      text: [
        '5 todos (1 in progress, 1 pending, 2 completed, 1 cancelled)',
        '- [x] Read the code (id: 1)',
        '- [~] Write the test (id: 2)',
        '- [ ] Fix the bug (id: 3)',
        '- [-] Old idea (id: 4)',
        '- [x] Ship (id: 5)',
      ].join('\n'),
      isError: false,
    });
    expect((await call(h, 'todoread', {})).text).toBe(result.text);
    expect(h.todos.list().map((t) => t.status)).toEqual(['completed', 'in_progress', 'pending', 'cancelled', 'completed']);
    await call(h, 'todowrite', { todos: [] });
    expect((await call(h, 'todoread', {})).text).toBe('No todos.');
  });

  it('TOOLS-1 merge upserts by id: the given items first, then the kept old ones; the store notifies', async () => {
    const h = host();
    const seen: number[] = [];
    h.todos.onChange((items) => seen.push(items.length));
    await call(h, 'todowrite', {
      todos: [
        { id: 'a', content: 'A', status: 'pending' },
        { id: 'b', content: 'B', status: 'pending' },
      ],
    });
    const merged = await call(h, 'todowrite', {
      merge: true,
      todos: [
        { id: 'b', content: 'B', status: 'in_progress' },
        { id: 'c', content: 'C', status: 'pending' },
      ],
    });
    expect(merged.text.split('\n').slice(1)).toEqual(['- [~] B (id: b)', '- [ ] C (id: c)', '- [ ] A (id: a)']);
    expect(seen).toEqual([2, 3]);
  });

  it('TOOLS-1 limits: 200 characters per todo, 50 todos, unique ids, known statuses', async () => {
    const h = host();
    expect((await call(h, 'todowrite', { todos: [{ id: '1', content: 'x'.repeat(201), status: 'pending' }] })).text).toBe(
      "Invalid argument 'todos[0].content' for 'todowrite': expected string to have <=200 characters.",
    );
    const many = Array.from({ length: 51 }, (_, i) => ({ id: String(i), content: 'c', status: 'pending' }));
    expect((await call(h, 'todowrite', { todos: many })).text).toBe('todos has 51 items; the limit is 50.');
    await call(h, 'todowrite', { todos: many.slice(0, 50) });
    expect((await call(h, 'todowrite', { merge: true, todos: [{ id: 'new', content: 'c', status: 'pending' }] })).text).toBe(
      'The merged list would have 51 todos; the limit is 50.',
    );
    expect(
      (
        await call(h, 'todowrite', {
          todos: [
            { id: '1', content: 'a', status: 'pending' },
            { id: '1', content: 'b', status: 'pending' },
          ],
        })
      ).text,
    ).toBe("The id '1' appears twice in todos; ids must be unique.");
    expect((await call(h, 'todowrite', { todos: [{ id: '1', content: 'a', status: 'done' }] })).text).toBe(
      'Invalid argument \'todos[0].status\' for \'todowrite\': expected one of "pending", "in_progress", "completed", "cancelled".',
    );
    expect(h.todos.list()).toHaveLength(50);
  });
});

describe('question', () => {
  const questions = [
    {
      header: 'Database',
      question: 'Which database?',
      options: [
        { label: 'Postgres', description: 'relational' },
        { label: 'SQLite', description: 'embedded' },
      ],
    },
    { header: 'Name', question: 'What name?' },
  ];

  it('TOOLS-1 asks the host and returns the answers in question order', async () => {
    let asked: readonly Question[] = [];
    const h = host({
      ask: async (qs) => {
        asked = qs;
        return [['SQLite'], ['my-app']];
      },
    });
    expect(await call(h, 'question', { questions })).toEqual({
      text: 'User answers: {"answers":[["SQLite"],["my-app"]]}',
      isError: false,
    });
    expect(asked[0]).toMatchObject({ multiple: false, custom: true, options: [{ label: 'Postgres' }, { label: 'SQLite' }] });
    expect(asked[1]).toMatchObject({ options: [], custom: true });
  });

  it('TOOLS-1 without a host prompt (crystal run) and on dismissal the call fails with the reference text', async () => {
    expect(await call(host(), 'question', { questions })).toEqual({ text: DISMISSED, isError: true });
    expect(await call(host({ ask: async () => 'dismissed' }), 'question', { questions })).toEqual({
      text: 'The user dismissed the question.',
      isError: true,
    });
  });

  it('TOOLS-1 labels must be unique, a question without options needs custom, at least one question', async () => {
    const h = host({ ask: async () => [['x']] });
    const twice = [{ header: 'h', question: 'q', options: [{ label: 'A' }, { label: 'A' }] }];
    expect((await call(h, 'question', { questions: twice })).text).toBe(
      "Question 1 has the option label 'A' twice; labels must be unique.",
    );
    expect((await call(h, 'question', { questions: [{ header: 'h', question: 'q', custom: false }] })).text).toBe(
      'Question 1 has no options, so custom must be true.',
    );
    expect((await call(h, 'question', { questions: [] })).text).toBe(
      "Invalid argument 'questions' for 'question': expected array to have >=1 items.",
    );
  });
});

describe('failures', () => {
  it('TOOLS-2 a ToolFailure reaches the model verbatim through the exception mapper; other errors keep the default text', () => {
    const parsed: ParsedToolCall = { id: 'x', name: 'read', arguments: '{}', input: {} };
    expect(builtinExceptionMapper(new ToolFailure('exact text.'), parsed)).toBe('exact text.');
    expect(builtinExceptionMapper(new Error('boom'), parsed)).toBe("Tool 'read' failed: boom");
  });
});
