/** The first screen (TUIX-9): where you are, with what, and three keys worth knowing. No engine here (early.ts paints it). */
import { PanelEntry } from '@crystal/tui';

export function welcome(workspace: string, model: string, mode: 'plan' | 'work', home: string | undefined): PanelEntry {
  const where = home && (workspace === home || workspace.startsWith(`${home}/`)) ? `~${workspace.slice(home.length)}` : workspace;
  return new PanelEntry(
    'Crystal Code',
    [
      `Working in ${where} with ${model}, ${mode === 'plan' ? 'Plan' : 'Work'} mode.`,
      '@ attaches a file · Shift+Tab switches Plan/Work · Esc interrupts · ? lists every key and command',
    ].join('\n'),
  );
}
