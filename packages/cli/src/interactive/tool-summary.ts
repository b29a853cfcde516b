/**
 * The one-line summary of a tool call (the same for a live card and for replay) and the capped
 * `+`/`-` preview of `edit`/`write` (TUI-2).
 */
import type { ToolCardData } from '@crystal/tui';

function inputOf(input: unknown, args: string): Record<string, unknown> {
  if (input !== null && typeof input === 'object') return input as Record<string, unknown>;
  try {
    const parsed = JSON.parse(args) as unknown;
    return parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

export function toolSummary(name: string, input: Record<string, unknown>, args: string): string {
  switch (name) {
    case 'bash':
      return str(input.command).split('\n')[0] ?? '';
    case 'read': {
      const range = typeof input.offset === 'number' ? ` from line ${input.offset}` : '';
      return `${str(input.path)}${range}`;
    }
    case 'write':
    case 'edit':
    case 'list':
    case 'view_image':
    case 'describe_image':
      return str(input.path) || '.';
    case 'glob':
      return `${str(input.pattern)}${input.path ? ` in ${str(input.path)}` : ''}`;
    case 'grep':
      return `${str(input.pattern)}${input.path ? ` in ${str(input.path)}` : ''}`;
    case 'todowrite':
      return Array.isArray(input.todos) ? `${input.todos.length} items` : 'todo list';
    case 'todoread':
      return 'todo list';
    case 'question': {
      const first = Array.isArray(input.questions) ? (input.questions[0] as Record<string, unknown> | undefined) : undefined;
      return str(first?.question) || 'a question for you';
    }
    default:
      return args.length > 200 ? `${args.slice(0, 200)}…` : args;
  }
}

export const DIFF_PREVIEW_LINES = 40;

export function toolDiff(name: string, input: Record<string, unknown>): string[] | undefined {
  const lines: string[] = [];
  if (name === 'edit') {
    for (const l of str(input.old_string).split('\n')) lines.push(`-${l}`);
    for (const l of str(input.new_string).split('\n')) lines.push(`+${l}`);
  } else if (name === 'write') {
    const contents = str(input.contents);
    for (const l of contents.replace(/\n$/, '').split('\n')) lines.push(`+${l}`);
  } else return undefined;
  return lines
    .slice(0, DIFF_PREVIEW_LINES + 1)
    .concat(lines.length > DIFF_PREVIEW_LINES + 1 ? [`… ${lines.length - DIFF_PREVIEW_LINES - 1} more`] : []);
}

export function toolCard(call: { name: string; input?: unknown; arguments: string }): ToolCardData {
  const input = inputOf(call.input, call.arguments);
  return { name: call.name, summary: toolSummary(call.name, input, call.arguments), diff: toolDiff(call.name, input) };
}

/** What a card shows under it once the tool returned: errors always; bash its tail; reads nothing. */
export function resultSummary(name: string, output: string, isError: boolean): string | undefined {
  const text = output.replace(/\s+$/, '');
  if (isError) return text.split('\n').slice(0, 6).join('\n');
  if (name === 'question') return questionAnswers(text);
  if (name === 'bash') {
    const lines = text.split('\n');
    const last = lines.at(-1) ?? '';
    const hidden = lines.length - 1;
    return hidden > 0 ? `(${hidden} line${hidden === 1 ? '' : 's'} hidden) ${last}` : last;
  }
  return undefined;
}

/** The chosen answers under a question card (`User answers: {"answers":[["SQLite"]]}`). */
function questionAnswers(output: string): string | undefined {
  const json = output.replace(/^User answers:\s*/, '');
  try {
    const parsed = JSON.parse(json) as { answers?: unknown };
    if (!Array.isArray(parsed.answers)) return undefined;
    const each = parsed.answers.map((a) => (Array.isArray(a) && a.length > 0 ? a.map(String).join(', ') : '(no answer)'));
    return `Answered: ${each.join(' · ')}`;
  } catch {
    return undefined;
  }
}
