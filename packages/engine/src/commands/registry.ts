/**
 * The slash-command registry (TUI-5): one place for names, aliases, when a command may run, and
 * argument completion. Surfaces only render what a command returns.
 */

/** When a command may run while the session is busy. */
export type CommandPhase =
  /** Reports state or adjusts the display: runs at once, also during a turn or compaction (QUEUE-10). */
  | 'report'
  /** Stops a busy turn, then runs in typed order; refused during compaction (QUEUE-6..9). */
  | 'stop-and-run'
  /** Quits: stops a busy turn or compaction, then exits (QUEUE-6, QUEUE-11). */
  | 'quit'
  /** Changes the session, workspace or model: refused while a turn or compaction runs. */
  | 'idle-only'
  /** A side question: its own request, runs at once (BTW-2). */
  | 'side'
  /** A custom command (CMD-1): its expanded text is sent like typed text (queued while busy). */
  | 'message';

export type CommandOutput =
  | { readonly kind: 'text'; readonly title?: string; readonly text: string }
  | { readonly kind: 'error'; readonly text: string }
  | { readonly kind: 'none' };

export interface CommandSpec {
  readonly name: string;
  readonly aliases: readonly string[];
  readonly usage: string;
  readonly summary: string;
  readonly phase: CommandPhase;
  /** Completions for the argument typed so far. */
  readonly complete?: (argument: string) => readonly string[] | Promise<readonly string[]>;
}

export interface ParsedCommand {
  readonly spec: CommandSpec;
  /** The name as typed (an alias, maybe). */
  readonly typed: string;
  readonly argument: string;
  readonly raw: string;
}

export const COMMANDS: readonly CommandSpec[] = [
  { name: 'help', aliases: ['h'], usage: '/help', summary: 'Shortcuts and commands.', phase: 'report' },
  { name: 'status', aliases: [], usage: '/status', summary: 'Workspace, model, tokens and options.', phase: 'report' },
  { name: 'model', aliases: [], usage: '/model [provider] [model]', summary: 'List or switch models.', phase: 'idle-only' },
  {
    name: 'thinking',
    aliases: ['think', 'effort'],
    usage: '/thinking [gear]',
    summary: 'Cycle or set the thinking gear.',
    phase: 'idle-only',
  },
  {
    name: 'approval',
    aliases: [],
    usage: '/approval [default|edit|review|audit|full|model …|thinking …]',
    summary: 'Cycle or set the approval mode; set the reviewer model and its thinking.',
    phase: 'idle-only',
  },
  { name: 'compact', aliases: ['summarize'], usage: '/compact', summary: 'Summarise older turns now.', phase: 'idle-only' },
  { name: 'clear', aliases: ['new'], usage: '/clear', summary: 'New conversation, new id.', phase: 'stop-and-run' },
  { name: 'resume', aliases: ['continue'], usage: '/resume [id]', summary: 'Resume a saved session.', phase: 'stop-and-run' },
  { name: 'sessions', aliases: [], usage: '/sessions [all]', summary: 'List saved sessions.', phase: 'report' },
  { name: 'fork', aliases: [], usage: '/fork [id]', summary: 'Branch this session to a new id.', phase: 'stop-and-run' },
  { name: 'export', aliases: [], usage: '/export [json|markdown] [path]', summary: 'Export the conversation.', phase: 'report' },
  { name: 'todos', aliases: ['todo'], usage: '/todos', summary: 'Print the todo list.', phase: 'report' },
  { name: 'stats', aliases: [], usage: '/stats', summary: 'Session statistics.', phase: 'report' },
  {
    name: 'rewind',
    aliases: ['checkpoint'],
    usage: '/rewind [N [code|chat|both]]',
    summary: 'Rewind code and/or conversation to before a message.',
    phase: 'idle-only',
  },
  { name: 'undo', aliases: [], usage: '/undo', summary: "Undo the last turn's file changes.", phase: 'idle-only' },
  { name: 'redo', aliases: [], usage: '/redo', summary: 'Take back the last rewind or undo.', phase: 'idle-only' },
  { name: 'mcp', aliases: [], usage: '/mcp', summary: 'MCP servers: state, tools, prompts, errors.', phase: 'report' },
  { name: 'btw', aliases: ['side'], usage: '/btw <question>', summary: 'Ask a side question.', phase: 'side' },
  {
    name: 'login',
    aliases: [],
    usage: '/login [provider]',
    summary: 'Store an API key (asked without echo).',
    phase: 'idle-only',
  },
  { name: 'quit', aliases: ['q', 'exit'], usage: '/quit', summary: 'Exit.', phase: 'quit' },
];

const byName = new Map<string, CommandSpec>();
for (const spec of COMMANDS) for (const name of [spec.name, ...spec.aliases]) byName.set(name, spec);

export function isCommand(text: string): boolean {
  return text.trimStart().startsWith('/');
}

/** Parses `/name argument…`; an unknown name is null (surfaces print `unknown command`). */
export function parseCommand(text: string): ParsedCommand | null {
  const raw = text.trim();
  const match = /^\/(\S+)\s*([\s\S]*)$/.exec(raw);
  if (!match) return null;
  const typed = (match[1] as string).toLowerCase();
  const spec = byName.get(typed);
  if (!spec) return null;
  return { spec, typed, argument: (match[2] as string).trim(), raw };
}

/** Picker entries for a `/` prefix: commands whose name or alias starts with it. */
export function commandCompletions(prefix: string): CommandSpec[] {
  const typed = prefix.replace(/^\//, '').toLowerCase();
  return COMMANDS.filter((spec) => [spec.name, ...spec.aliases].some((n) => n.startsWith(typed)));
}

/**
 * The key table of `/help` (TUIX-3): Esc, Ctrl+C (QUEUE-12, QUEUE-13), Enter and empty Enter
 * exactly as the controller and the terminal behave, then every other key.
 */
export const KEY_HELP: readonly (readonly [string, string])[] = [
  ['Esc', 'During a turn: interrupts it; queued text stays. At an idle prompt: clears the composer.'],
  ['', 'In an overlay or picker: closes it. Twice on an empty composer: pick an earlier message to rewind to.'],
  ['Ctrl+C', 'During a turn: interrupts it; queued text stays. At an idle prompt: clears the composer.'],
  ['', 'Twice on an empty composer: exits (the session is saved).'],
  ['Enter', 'At an idle prompt: sends the text. During a turn: queues it as a follow-up (sent after the current step).'],
  ['empty Enter', 'With follow-ups queued: interrupts the turn so the queue goes now. With nothing queued: does nothing.'],
  ['Shift+Tab', 'Cycles Plan and Work.'],
  ['Tab', 'Completes the slash command, its argument, or the @path before the cursor; never changes the mode.'],
  ['Ctrl+J', 'Inserts a newline (also Alt+Enter, or \\ then Enter).'],
  ['Up/Down', 'Moves in the composer, then through earlier prompts.'],
  ['PageUp/PageDown', 'Full-screen view: scrolls the transcript (also Ctrl+Up/Down, the wheel). Inline: the terminal scrolls.'],
  ['Ctrl+O', 'Expands or collapses the output of the last tool card (a long command output, read or diff).'],
  ['Ctrl+V', 'Attaches the image on the clipboard as [Image #N].'],
  ['Ctrl+L', 'Repaints the screen.'],
  ['@path', 'Attaches that workspace file (an image as an image); Tab completes the path.'],
  ['!command', 'Runs a shell command through the bash tool (same approval and fence); the model sees its output.'],
  ['?', 'On an empty composer: this help.'],
];

/** Built-in commands, then the custom ones (CMD-1) whose names no built-in name or alias takes. */
export function withCustomCommands(custom: readonly CommandSpec[]): CommandSpec[] {
  return [...COMMANDS, ...custom.filter((spec) => !byName.has(spec.name))];
}

export function helpText(custom: readonly CommandSpec[] = []): string {
  const all = withCustomCommands(custom);
  const width = Math.max(...all.map((c) => c.usage.length));
  const lines = all.map((c) => {
    const aliases = c.aliases.length > 0 ? ` (${c.aliases.map((a) => `/${a}`).join(', ')})` : '';
    return `${c.usage.padEnd(width)}  ${c.summary}${aliases}`;
  });
  const keyWidth = Math.max(...KEY_HELP.map(([k]) => k.length));
  return ['Keys:', ...KEY_HELP.map(([key, text]) => `${key.padEnd(keyWidth)}  ${text}`), '', 'Commands:', ...lines].join('\n');
}
