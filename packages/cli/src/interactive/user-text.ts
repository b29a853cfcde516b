/**
 * A user message as the transcript shows it: the provenance prefix removed (IMG-5), and the
 * ranges of attached markers so they keep their colour.
 */
import { MARKER_PREFIX, splitHookContext, splitMentionBlocks, splitShellBlocks } from '@crystal/engine';
import type { MarkerRange } from '@crystal/tui';

const TAGGED = new RegExp(`${MARKER_PREFIX}(\\[Image #[1-9][0-9]*\\])`, 'g');

export function displayUserText(sentWithHooks: string): { text: string; markers: MarkerRange[] } {
  // HOOK-1: context a SessionStart or UserPromptSubmit hook added is named, not printed.
  const hooked = splitHookContext(sentWithHooks);
  const sent =
    hooked.events.length === 0 ? hooked.text : `${hooked.text}\n[with ${[...new Set(hooked.events)].join(', ')} hook context]`;
  // TUIX-4: `!cmd` output sent along is named, not printed again (its card shows it).
  const shell = splitShellBlocks(sent);
  // TUIX-5: the files an @ mention attached are named, not printed.
  const split = splitMentionBlocks(shell.text);
  const ran = shell.commands.map((c) => `[with the output of !${c}]\n`).join('');
  const text =
    ran +
    (split.files.length === 0
      ? shell.text
      : `${split.text}\n${split.files.map((f) => `[attached ${f.path} · ${f.lines} line${f.lines === 1 ? '' : 's'}]`).join('\n')}`);
  const markers: MarkerRange[] = [];
  let out = '';
  let at = 0;
  for (const m of text.matchAll(TAGGED)) {
    out += text.slice(at, m.index).replaceAll(MARKER_PREFIX, '');
    const label = m[1] as string;
    markers.push({ start: out.length, end: out.length + label.length });
    out += label;
    at = (m.index ?? 0) + m[0].length;
  }
  out += text.slice(at).replaceAll(MARKER_PREFIX, '');
  return { text: out, markers };
}
