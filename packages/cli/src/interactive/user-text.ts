/**
 * A user message as the transcript shows it: the provenance prefix removed (IMG-5), and the
 * ranges of attached markers so they keep their colour.
 */
import { MARKER_PREFIX, splitMentionBlocks, splitShellBlocks } from '@crystal/engine';
import type { MarkerRange } from '@crystal/tui';

const TAGGED = new RegExp(`${MARKER_PREFIX}(\\[Image #[1-9][0-9]*\\])`, 'g');

export function displayUserText(sent: string): { text: string; markers: MarkerRange[] } {
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
