/** The slash picker's commands (TUI-5) with argument completion for the ones that take a word. */
import { THINKING_EFFORTS } from '@crystal/core';
import { COMMANDS, type CommandSpec, listSessions } from '@crystal/engine';
import type { PickerCommand } from '@crystal/tui';

/** `commands`: the controller's list (built-in and custom, CMD-1). */
export function pickerCommands(
  home: string,
  workspace: () => string,
  commands: readonly CommandSpec[] = COMMANDS,
): PickerCommand[] {
  const sessions = async (): Promise<readonly string[]> =>
    (await listSessions(home, workspace()).catch(() => [])).map((s) => s.id);
  const fixed: Record<string, (arg: string) => readonly string[] | Promise<readonly string[]>> = {
    approval: () => ['default', 'edit', 'review', 'audit', 'full', 'model', 'thinking'],
    export: () => ['json', 'markdown'],
    sessions: () => ['all'],
    stats: () => ['all'],
    thinking: () => THINKING_EFFORTS,
    resume: sessions,
    fork: sessions,
  };
  return commands.map((spec) => ({
    name: spec.name,
    aliases: spec.aliases,
    usage: spec.usage,
    summary: spec.summary,
    complete: spec.complete ?? fixed[spec.name],
  }));
}

interface PromptLike {
  readonly command: string;
  readonly description: string;
  readonly arguments: readonly { readonly name: string; readonly required?: boolean }[];
}

/**
 * MCP-6: keeps the picker's `/mcp__server__prompt` entries in step with the running servers.
 * `commands` is the list the picker reads, updated in place when a server's prompts change.
 */
export function syncMcpPrompts(commands: PickerCommand[], prompts: readonly PromptLike[]): void {
  for (let i = commands.length - 1; i >= 0; i--) if (commands[i]?.name.startsWith('mcp__')) commands.splice(i, 1);
  for (const prompt of prompts) {
    const args = prompt.arguments.map((a) => (a.required ? ` <${a.name}>` : ` [${a.name}]`)).join('');
    commands.push({
      name: prompt.command.toLowerCase(),
      aliases: [],
      usage: `/${prompt.command}${args}`,
      summary: prompt.description,
    });
  }
}
