/**
 * The session's todo list and the `todowrite` / `todoread` tools. The list belongs to the
 * session, not to the mode: Plan writes plan steps as pending todos, Work works through them.
 */
import type { ToolDefinition } from '@crystal/core';
import { lazySchema, parseArgs } from './args.js';
import * as z from 'zod/mini';
import { ToolFailure } from './failure.js';
import type { ToolHost } from './host.js';

export type TodoStatus = 'pending' | 'in_progress' | 'completed' | 'cancelled';

export interface TodoItem {
  readonly id: string;
  readonly content: string;
  readonly status: TodoStatus;
}

export const TODO_MAX_ITEMS = 50;
export const TODO_MAX_CONTENT = 200;

const STATUS_SPELLINGS: Readonly<Record<string, TodoStatus>> = {
  pending: 'pending',
  in_progress: 'in_progress',
  'in-progress': 'in_progress',
  completed: 'completed',
  complete: 'completed',
  cancelled: 'cancelled',
  canceled: 'cancelled',
};

const MARKS: Readonly<Record<TodoStatus, string>> = {
  pending: '[ ]',
  in_progress: '[~]',
  completed: '[x]',
  cancelled: '[-]',
};

/** The todo list of one session; surfaces subscribe to show it (`/todos`). */
export class TodoStore {
  private items: TodoItem[];
  private readonly listeners = new Set<(items: readonly TodoItem[]) => void>();

  constructor(items: readonly TodoItem[] = []) {
    this.items = [...items];
  }

  list(): readonly TodoItem[] {
    return this.items;
  }

  replace(items: readonly TodoItem[]): void {
    this.set([...items]);
  }

  /** Upserts by id: the given items first (in their order), then the old ones they did not name. */
  merge(items: readonly TodoItem[]): void {
    const named = new Set(items.map((item) => item.id));
    const merged = [...items, ...this.items.filter((item) => !named.has(item.id))];
    if (merged.length > TODO_MAX_ITEMS) {
      throw new ToolFailure(`The merged list would have ${merged.length} todos; the limit is ${TODO_MAX_ITEMS}.`);
    }
    this.set(merged);
  }

  onChange(listener: (items: readonly TodoItem[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** `N todos (a in progress, b pending, c completed, d cancelled)` and one line per todo. */
  format(): string {
    if (this.items.length === 0) return 'No todos.';
    const count = (status: TodoStatus): number => this.items.filter((item) => item.status === status).length;
    const head = `${this.items.length} todos (${count('in_progress')} in progress, ${count('pending')} pending, ${count('completed')} completed, ${count('cancelled')} cancelled)`;
    return [head, ...this.items.map((item) => `- ${MARKS[item.status]} ${item.content} (id: ${item.id})`)].join('\n');
  }

  private set(items: TodoItem[]): void {
    this.items = items;
    for (const listener of this.listeners) listener(this.items);
  }
}

const schema = lazySchema(() =>
  z.object({
    todos: z.array(
      z.object({
        id: z.string().check(z.minLength(1)),
        content: z.string().check(z.minLength(1), z.maxLength(TODO_MAX_CONTENT)),
        status: z.string().check(
          z.refine((value) => Object.hasOwn(STATUS_SPELLINGS, value), {
            error: 'expected one of "pending", "in_progress", "completed", "cancelled"',
          }),
        ),
      }),
    ),
    merge: z.optional(z.boolean()),
  }),
);

export function todoWriteTool(host: ToolHost): ToolDefinition {
  return {
    name: 'todowrite',
    description:
      'Write the session todo list. Each todo has an id, content (at most 200 characters) and status: pending, in_progress, completed or cancelled. Without merge the list is replaced; with merge=true todos are updated or added by id. At most 50 todos. Keep exactly one todo in_progress while you work.',
    parameters: {
      type: 'object',
      properties: {
        todos: {
          type: 'array',
          maxItems: TODO_MAX_ITEMS,
          items: {
            type: 'object',
            properties: {
              id: { type: 'string', description: 'Stable id, for example "1".' },
              content: { type: 'string', maxLength: TODO_MAX_CONTENT, description: 'What to do.' },
              status: { type: 'string', enum: ['pending', 'in_progress', 'completed', 'cancelled'] },
            },
            required: ['id', 'content', 'status'],
            additionalProperties: false,
          },
        },
        merge: { type: 'boolean', description: 'Update and add by id instead of replacing the list. Default false.' },
      },
      required: ['todos'],
      additionalProperties: false,
    },
    async execute(input) {
      const args = parseArgs('todowrite', schema(), input);
      if (args.todos.length > TODO_MAX_ITEMS) {
        throw new ToolFailure(`todos has ${args.todos.length} items; the limit is ${TODO_MAX_ITEMS}.`);
      }
      const seen = new Set<string>();
      const items = args.todos.map((todo): TodoItem => {
        if (seen.has(todo.id)) throw new ToolFailure(`The id '${todo.id}' appears twice in todos; ids must be unique.`);
        seen.add(todo.id);
        return { id: todo.id, content: todo.content, status: STATUS_SPELLINGS[todo.status] as TodoStatus };
      });
      if (args.merge) host.todos.merge(items);
      else host.todos.replace(items);
      return host.todos.format();
    },
  };
}

export function todoReadTool(host: ToolHost): ToolDefinition {
  return {
    name: 'todoread',
    description: 'Read the session todo list.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    async execute() {
      return host.todos.format();
    },
  };
}
