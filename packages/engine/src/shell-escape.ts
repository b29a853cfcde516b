/**
 * `!command` (TUIX-4): the user runs a shell command at the prompt. It is one call of the `bash`
 * tool through the session's own executor, so it takes the same path as the model's calls:
 * the approval policy (Plan refuses it, the classifier and grants decide whether to ask), the
 * fence and whatever sandbox the bash tool applies, its timeout, and its output cap. Surfaces
 * see the usual `tool-calls`, `tool-output` and `tool-results` events. The command and its
 * result go to the model with the next message, as a block before the user's words.
 */
import {
  type ParsedToolCall,
  type ToolDefinition,
  ToolExecutor,
  type ToolInvocationPolicy,
  type ToolResultPart,
} from '@crystal/core';

/** `!cmd` at the start of the composer; a lone `!` or `! ` prose is not a command. */
export function shellEscapeCommand(text: string): string | undefined {
  const match = /^\s*!(\S[\s\S]*)$/.exec(text);
  if (!match) return undefined;
  const command = (match[1] as string).trim();
  return command === '' ? undefined : command;
}

export interface ShellEscapeDeps {
  readonly tools: readonly ToolDefinition[];
  readonly policy?: ToolInvocationPolicy;
  readonly mapException?: ConstructorParameters<typeof ToolExecutor>[0]['mapException'];
  readonly publish: (
    event: { type: 'tool-calls'; calls: ParsedToolCall[] } | { type: 'tool-results'; results: ToolResultPart[] },
  ) => void;
}

let nextCall = 1;

/** Runs the command as a `bash` call; resolves its result (an error result when refused or failed). */
export async function runShellEscape(deps: ShellEscapeDeps, command: string, signal: AbortSignal): Promise<ToolResultPart> {
  const input = { command };
  const call: ParsedToolCall = {
    id: `user_shell_${Date.now().toString(36)}_${nextCall++}`,
    name: 'bash',
    arguments: JSON.stringify(input),
    input,
  };
  deps.publish({ type: 'tool-calls', calls: [call] });
  const executor = new ToolExecutor({
    tools: deps.tools,
    ...(deps.policy ? { policy: deps.policy } : {}),
    ...(deps.mapException ? { mapException: deps.mapException } : {}),
  });
  const [result] = await executor.runBatch([call], signal);
  const part = result as ToolResultPart;
  deps.publish({ type: 'tool-results', results: [part] });
  return part;
}

const OPEN = '<user-shell command="';
const CLOSE = '</user-shell>';

/** The block the model reads before the next message. */
export function shellContextBlock(command: string, result: ToolResultPart): string {
  const output = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
  const status = result.isError ? ' failed="true"' : '';
  return `${OPEN}${command.replace(/"/g, '&quot;')}"${status}>\nThe user ran this command at the prompt; its result:\n${output.replace(/\n?$/, '\n')}${CLOSE}`;
}

/** Splits leading `!command` blocks off a sent message (for display); the commands in order. */
export function splitShellBlocks(text: string): { text: string; commands: string[] } {
  const commands: string[] = [];
  let rest = text;
  while (rest.startsWith(OPEN)) {
    const end = rest.indexOf(CLOSE);
    if (end === -1) break;
    const head = /^<user-shell command="([^"]*)"/.exec(rest);
    commands.push((head?.[1] ?? '').replace(/&quot;/g, '"'));
    rest = rest.slice(end + CLOSE.length).replace(/^\n\n?/, '');
  }
  return { text: rest, commands };
}
