/**
 * The one-line summary of a tool call that every surface shows on its card (the terminal's
 * tool entries and the Web page's tool cards): the path, the command's first line, the pattern.
 */
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

/** The summary from the call's JSON arguments (what the wire and the archive carry). */
export function toolSummaryOf(name: string, args: string): string {
  let input: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(args) as unknown;
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) input = parsed as Record<string, unknown>;
  } catch {
    input = {};
  }
  return toolSummary(name, input, args);
}
