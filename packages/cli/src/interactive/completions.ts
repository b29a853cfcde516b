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
    approval: () => ['default', 'edit', 'full'],
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
