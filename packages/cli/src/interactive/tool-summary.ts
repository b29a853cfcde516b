/**
 * The one-line summary of a tool call (the same for a live card and for replay) and the capped
 * `+`/`-` preview of `edit`/`write` (TUI-2).
 */
import { toolSummary } from '@crystal/engine';
import type { OutputStreams, StreamTail, ToolCardData } from '@crystal/tui';

// The one-line summary is the engine's (the terminal and the Web page show the same line).
export { toolSummary };

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

export const DIFF_PREVIEW_LINES = 40;

/**
 * The card's first preview, before the file is read (the engine's change preview and then the
 * tool's own patch replace it): `edit` as its old and new text, `write` as numbered new lines.
 * A final newline is no line of its own.
 */
export function toolDiff(name: string, input: Record<string, unknown>): string[] | undefined {
  const lines: string[] = [];
  const split = (text: string): string[] => text.replace(/\n$/, '').split('\n');
  if (name === 'edit') {
    for (const l of split(str(input.old_string))) lines.push(`- │ ${l}`);
    for (const l of split(str(input.new_string))) lines.push(`+ │ ${l}`);
  } else if (name === 'write') {
    const contents = split(str(input.contents));
    const width = String(contents.length).length;
    for (const [i, l] of contents.entries()) lines.push(`+ ${String(i + 1).padStart(width)} │ ${l}`);
  } else return undefined;
  return lines
    .slice(0, DIFF_PREVIEW_LINES + 1)
    .concat(lines.length > DIFF_PREVIEW_LINES + 1 ? [`\\ ${lines.length - DIFF_PREVIEW_LINES - 1} more lines`] : []);
}

export function toolCard(call: { name: string; input?: unknown; arguments: string }): ToolCardData {
  const input = inputOf(call.input, call.arguments);
  return { name: call.name, summary: toolSummary(call.name, input, call.arguments), diff: toolDiff(call.name, input) };
}

/**
 * What a card shows under it once the tool returned: a failing call its last lines (where the
 * error is) with how many came before (TUIX-7); bash its last line; reads nothing. Ctrl+O
 * shows the whole output.
 */
export function resultSummary(name: string, output: string, isError: boolean, streams?: OutputStreams): string | undefined {
  const text = output.replace(/\s+$/, '');
  const lines = text.split('\n');
  if (isError && name === 'bash' && streams && streams.stderr.lines > 0) return failureByStream(text, streams);
  if (isError) {
    if (lines.length <= RESULT_TAIL_LINES + 1) return text;
    // bash: keep the `exit N` line, then the tail.
    const head = name === 'bash' && /^exit \d+$/.test(lines[0] ?? '') ? [lines[0] as string] : [];
    const rest = lines.slice(head.length);
    const hidden = rest.length - RESULT_TAIL_LINES;
    return [...head, `… ${hidden} more line${hidden === 1 ? '' : 's'} above · Ctrl+O shows all`, ...rest.slice(hidden)].join(
      '\n',
    );
  }
  if (name === 'question') return questionAnswers(text);
  if (name === 'bash') {
    // `exit 0` says nothing; a short output shows whole, a long one its last line.
    const body = /^exit 0$/.test(lines[0] ?? '') ? lines.slice(1) : lines;
    if (body.length <= 3) return body.join('\n');
    const hidden = body.length - 1;
    return `(${hidden} more line${hidden === 1 ? '' : 's'} · Ctrl+O shows all) ${body.at(-1) ?? ''}`;
  }
  return undefined;
}

export const RESULT_TAIL_LINES = 8;
/** A failing command that wrote to stderr: its stdout's last lines, then stderr's apart. */
export const STDOUT_TAIL_LINES = 3;
export const STDERR_TAIL_LINES = 4;

/**
 * A failing bash call whose output streamed with stream labels (TUIX-7): the first line of the
 * result (`exit N`, or the timeout), the tail of stdout, then the tail of stderr under its own
 * label, each with how many lines came before; then the result's notes after the output (the
 * sandbox's refusals). Ctrl+O still shows the whole output, both streams as they came.
 */
function failureByStream(text: string, streams: OutputStreams): string {
  const [first = '', ...rest] = text.split('\n');
  const out = [first];
  const tail = (stream: StreamTail, keep: number): string[] => {
    const kept = stream.text.replace(/\s+$/, '').split('\n');
    const blankAtEnd = stream.text.split('\n').length - (stream.text.endsWith('\n') ? 1 : 0) - kept.length;
    const shown = kept.slice(-keep);
    const hidden = Math.max(0, stream.lines - blankAtEnd - shown.length);
    return [...(hidden > 0 ? [`… ${hidden} more line${hidden === 1 ? '' : 's'} above · Ctrl+O shows all`] : []), ...shown];
  };
  if (streams.stdout.text.trim() !== '') out.push(...tail(streams.stdout, STDOUT_TAIL_LINES));
  out.push('stderr:', ...tail(streams.stderr, STDERR_TAIL_LINES));
  // What the tool added after the output (the sandbox's explanation of a refusal).
  const body = rest.join('\n');
  const combined = streams.combined?.replace(/\r\n/g, '\n').replace(/\s+$/, '');
  if (combined !== undefined && combined !== '' && body.startsWith(combined)) {
    const notes = body.slice(combined.length).trim();
    if (notes !== '') out.push(...notes.split('\n').slice(0, 2));
  }
  return out.join('\n');
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
