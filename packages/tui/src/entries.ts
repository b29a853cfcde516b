/**
 * Transcript entries: what the transcript shows, each laying itself out per width and caching
 * the result, so a frame only touches the entries it shows.
 */
import { renderMarkdown } from './markdown.js';
import { MarkdownStream } from './markdown-stream.js';
import { PlainStream } from './plain-stream.js';
import { arrayRows, type Rows } from './rows.js';
import { sanitize, sanitizeToolBody } from './sanitize.js';
import { paint, type Style, theme } from './style.js';
import { type Span, truncate, wrapHard, wrapSpans } from './wrap.js';

export interface TranscriptEntry {
  rows(width: number): Rows;
  /** Drops cached layouts (the Markdown lexer arrived). */
  invalidate?(): void;
}

/** An entry laid out once per width. */
abstract class CachedEntry implements TranscriptEntry {
  private width = -1;
  private cache: Rows | undefined;

  rows(width: number): Rows {
    if (width !== this.width || !this.cache) {
      this.width = width;
      this.cache = arrayRows(this.layout(width));
    }
    return this.cache;
  }

  invalidate(): void {
    this.cache = undefined;
  }

  protected abstract layout(width: number): string[];
}

/** A range of `[Image #N]` in a user message, painted in the marker colour. */
export interface MarkerRange {
  readonly start: number;
  readonly end: number;
}

/** What the user sent (or what joined a turn as a follow-up). */
export class UserEntry extends CachedEntry {
  constructor(
    readonly text: string,
    private readonly markers: readonly MarkerRange[] = [],
  ) {
    super();
  }

  protected layout(width: number): string[] {
    const bar: Span = { text: '▌ ', style: theme.user };
    const spans: Span[] = [];
    let at = 0;
    for (const m of [...this.markers].sort((a, b) => a.start - b.start)) {
      if (m.start > at) spans.push({ text: sanitize(this.text.slice(at, m.start)) });
      spans.push({ text: this.text.slice(m.start, m.end), style: theme.marker });
      at = m.end;
    }
    spans.push({ text: sanitize(this.text.slice(at)) });
    return wrapSpans(spans, { width, firstPrefix: [bar], restPrefix: [bar] });
  }
}

/** Assistant text: streamed Markdown while it arrives, laid out in one piece once finished. */
export class AssistantEntry implements TranscriptEntry {
  private stream: MarkdownStream | undefined = new MarkdownStream();
  private finished: { text: string; width: number; rows: Rows } | undefined;
  private finalText = '';

  append(delta: string): void {
    this.stream?.append(delta);
  }

  get text(): string {
    return this.stream?.text ?? this.finalText;
  }

  get streaming(): boolean {
    return this.stream !== undefined;
  }

  finish(): void {
    if (!this.stream) return;
    this.finalText = this.stream.text;
    this.stream = undefined;
  }

  /** A finished message (replay): laid out only when it is first shown. */
  static of(text: string): AssistantEntry {
    const entry = new AssistantEntry();
    entry.stream = undefined;
    entry.finalText = text;
    return entry;
  }

  rows(width: number): Rows {
    if (this.stream) return this.stream.rows(width);
    if (!this.finished || this.finished.width !== width) {
      this.finished = { text: this.finalText, width, rows: arrayRows(renderMarkdown(this.finalText, width)) };
    }
    return this.finished.rows;
  }

  invalidate(): void {
    this.finished = undefined;
    if (this.stream) {
      const text = this.stream.text;
      this.stream = new MarkdownStream();
      this.stream.append(text);
    }
  }
}

/** The model's reasoning, dim under a `Thinking` label. */
export class ReasoningEntry implements TranscriptEntry {
  private readonly stream = new PlainStream(theme.muted, [{ text: '┆ ', style: theme.border }]);

  append(delta: string): void {
    this.stream.append(delta);
  }

  get text(): string {
    return this.stream.text;
  }

  rows(width: number): Rows {
    const body = this.stream.rows(width);
    const label = paint('Thinking', theme.dim);
    return { count: body.count + 1, row: (i) => (i === 0 ? label : body.row(i - 1)) };
  }
}

export type Tone = 'note' | 'error' | 'notice' | 'success';

const TONES: Record<Tone, Style> = { note: theme.muted, error: theme.error, notice: theme.warn, success: theme.success };

/** One line or a few of operator information: notes, errors, the retry notice. */
export class NoteEntry extends CachedEntry {
  constructor(
    readonly text: string,
    readonly tone: Tone = 'note',
  ) {
    super();
  }

  protected layout(width: number): string[] {
    const style = TONES[this.tone];
    const mark: Span = { text: this.tone === 'error' ? '✗ ' : '· ', style };
    return wrapSpans([{ text: sanitize(this.text), style }], { width, firstPrefix: [mark], restPrefix: [{ text: '  ' }] });
  }
}

/** A command's report (`/status`, `/help`): a titled, preformatted panel. */
export class PanelEntry extends CachedEntry {
  constructor(
    readonly title: string | undefined,
    readonly text: string,
  ) {
    super();
  }

  protected layout(width: number): string[] {
    const bar: Span = { text: '│ ', style: theme.border };
    const rows: string[] = [];
    if (this.title) rows.push(...wrapSpans([{ text: this.title, style: theme.accentBold }], { width, firstPrefix: [bar] }));
    for (const line of sanitize(this.text).split('\n')) rows.push(...wrapHard([{ text: line }], width, [bar]));
    return rows;
  }
}

export type ToolStatus = 'pending' | 'running' | 'done' | 'failed' | 'denied';

/** The values of a tool card (TUI-2): a one-line summary, a capped diff, output and result. */
export interface ToolCardData {
  /** The tool name as called (`write`); shown in Title Case. */
  readonly name: string;
  /** The one-line summary (path, command, pattern). */
  readonly summary: string;
  /**
   * `edit`/`write` (TUIX-10): unified diff lines, `@@` hunk headers, `+ 12 │ text`,
   * `- 12 │ text`, `  12 │ text` and `\ note` (see the engine's change-preview.ts).
   */
  readonly diff?: readonly string[] | undefined;
}

export const DIFF_MAX_ROWS = 12;
export const OUTPUT_TAIL_ROWS = 6;
/** A collapsed result shows this many lines (a failing command: its last ones). */
export const RESULT_MAX_ROWS = 12;
/** An expanded card shows at most this many output lines. */
export const EXPANDED_MAX_LINES = 2000;

export function titleCase(name: string): string {
  return name
    .split(/[_\-\s]+/)
    .filter(Boolean)
    .map((w) => (w[0] as string).toUpperCase() + w.slice(1))
    .join(' ');
}

/** One diff line, coloured by its kind, indentation kept, cut at two rows. */
export function diffLineRows(line: string, width: number, prefix: readonly Span[]): string[] {
  const text = sanitize(line);
  const gutter = /^([+\- ] *\d* \u2502 )/.exec(text);
  const tone = text.startsWith('+')
    ? theme.added
    : text.startsWith('-')
      ? theme.removed
      : text.startsWith('@@')
        ? theme.accent
        : text.startsWith('\\')
          ? theme.muted
          : undefined;
  const spans: Span[] = gutter
    ? [
        { text: gutter[1] as string, style: tone ?? theme.muted },
        { text: truncate(text.slice((gutter[1] as string).length), width * 2), style: tone },
      ]
    : [{ text: truncate(text, width * 2), style: tone ?? theme.muted }];
  return wrapHard(spans, width, prefix).slice(0, 2);
}

/** The last part of one output stream of a command, and how many lines it had in all (TUIX-7). */
export interface StreamTail {
  /** The stream's last characters (at most STREAM_KEEP_CHARS). */
  readonly text: string;
  /** Lines in the whole stream. */
  readonly lines: number;
}

/** A command's output by stream, as it streamed (a replayed card has none). */
export interface OutputStreams {
  readonly stdout: StreamTail;
  readonly stderr: StreamTail;
  /** Both streams in arrival order, while short enough to keep whole (else undefined). */
  readonly combined: string | undefined;
}

export const STREAM_KEEP_CHARS = 16_000;
const COMBINED_KEEP_CHARS = 100_000;

class StreamCounter {
  text = '';
  private newlines = 0;
  private endsOpen = false;

  push(chunk: string): void {
    for (let i = chunk.indexOf('\n'); i !== -1; i = chunk.indexOf('\n', i + 1)) this.newlines++;
    if (chunk !== '') this.endsOpen = !chunk.endsWith('\n');
    this.text += chunk;
    if (this.text.length > STREAM_KEEP_CHARS * 2) this.text = this.text.slice(-STREAM_KEEP_CHARS);
  }

  tail(): StreamTail {
    return { text: this.text.slice(-STREAM_KEEP_CHARS), lines: this.newlines + (this.endsOpen ? 1 : 0) };
  }
}

export class ToolEntry implements TranscriptEntry {
  private status: ToolStatus = 'pending';
  private byStream: { stdout: StreamCounter; stderr: StreamCounter; combined: string | undefined } | undefined;
  private output = new PlainStream(theme.muted, [{ text: '  │ ', style: theme.border }]);
  private resultText: string | undefined;
  private fullText: string | undefined;
  private diffLines: readonly string[] | undefined;
  private open = false;
  private width = -1;
  private head: string[] | undefined;

  constructor(readonly data: ToolCardData) {
    this.diffLines = data.diff;
  }

  setStatus(status: ToolStatus): void {
    if (status === this.status) return;
    this.status = status;
    this.head = undefined;
  }

  get state(): ToolStatus {
    return this.status;
  }

  get diff(): readonly string[] | undefined {
    return this.diffLines;
  }

  /** Streamed output; `stream` (when the host knows it) keeps stdout and stderr apart too. */
  appendOutput(chunk: string, stream?: 'stdout' | 'stderr'): void {
    this.output.append(sanitizeToolBody(chunk));
    if (!stream) return;
    this.byStream ??= { stdout: new StreamCounter(), stderr: new StreamCounter(), combined: '' };
    this.byStream[stream].push(chunk);
    if (this.byStream.combined !== undefined) {
      this.byStream.combined += chunk;
      if (this.byStream.combined.length > COMBINED_KEEP_CHARS) this.byStream.combined = undefined;
    }
  }

  /** The output by stream, when it streamed with stream labels (TUIX-7). */
  get streams(): OutputStreams | undefined {
    const s = this.byStream;
    return s && { stdout: s.stdout.tail(), stderr: s.stderr.tail(), combined: s.combined };
  }

  /** The result line(s) shown under the card (an error, a bash tail). */
  setResult(text: string | undefined): void {
    this.resultText = text;
    this.head = undefined;
  }

  /** The whole output, shown when the card is expanded (TUIX-7). */
  setFullOutput(text: string | undefined): void {
    this.fullText = text;
    this.head = undefined;
  }

  /** The real hunks once the tool reported them (TUIX-10). */
  setDiff(lines: readonly string[] | undefined): void {
    this.diffLines = lines;
    this.head = undefined;
  }

  /** Whether Ctrl+O would show more than the collapsed card. */
  get expandable(): boolean {
    if ((this.diffLines?.length ?? 0) > DIFF_MAX_ROWS) return true;
    if (this.fullText === undefined) return false;
    const full = this.fullText.replace(/\s+$/, '');
    return full !== (this.resultText ?? '').replace(/\s+$/, '') && full !== '';
  }

  /** Takes another card's status, result, output and diff (a copy printed expanded). */
  copyResultOf(other: ToolEntry): void {
    this.status = other.status;
    this.resultText = other.resultText;
    this.fullText = other.fullText;
    this.diffLines = other.diffLines;
    this.head = undefined;
  }

  get expanded(): boolean {
    return this.open;
  }

  setExpanded(open: boolean): void {
    if (open === this.open) return;
    this.open = open;
    this.head = undefined;
  }

  invalidate(): void {
    this.head = undefined;
  }

  rows(width: number): Rows {
    if (!this.head || width !== this.width) {
      this.width = width;
      this.head = this.layoutHead(width);
    }
    const head = this.head;
    if (this.status !== 'running') return arrayRows(head);
    // While it runs: the last few rows of its output.
    const out = this.output.rows(width);
    const from = Math.max(0, out.count - OUTPUT_TAIL_ROWS);
    const shown = out.count - from;
    return { count: head.length + shown, row: (i) => (i < head.length ? (head[i] as string) : out.row(from + i - head.length)) };
  }

  private layoutHead(width: number): string[] {
    const { dot, style } = STATUS_MARK[this.status];
    const name = titleCase(this.data.name);
    const rows = wrapSpans(
      [
        { text: name, style: theme.bold },
        { text: ' ' },
        { text: truncate(sanitize(this.data.summary).replace(/\n/g, ' '), Math.max(10, width - name.length - 4)) },
        ...(this.status === 'denied' ? [{ text: '  Denied', style: theme.error }] : []),
      ],
      { width, firstPrefix: [{ text: `${dot} `, style }], restPrefix: [{ text: '  ' }] },
    );
    const diff = this.diffLines ?? [];
    const pad: Span = { text: '  │ ', style: theme.border };
    const diffShown = this.open ? diff.length : DIFF_MAX_ROWS;
    for (const line of diff.slice(0, diffShown)) rows.push(...diffLineRows(line, width, [pad]));
    if (diff.length > diffShown) {
      rows.push(
        ...wrapSpans([{ text: `… ${diff.length - diffShown} more lines · Ctrl+O expands`, style: theme.muted }], {
          width,
          firstPrefix: [pad],
        }),
      );
    }
    const tone = this.status === 'failed' ? theme.error : theme.muted;
    if (this.open && this.fullText !== undefined && this.fullText.trim() !== '') {
      const lines = sanitizeToolBody(this.fullText.replace(/\s+$/, '')).split('\n');
      for (const line of lines.slice(0, EXPANDED_MAX_LINES)) rows.push(...wrapHard([{ text: line, style: tone }], width, [pad]));
      if (lines.length > EXPANDED_MAX_LINES)
        rows.push(paint(`  │ … ${lines.length - EXPANDED_MAX_LINES} more lines`, theme.muted));
      rows.push(...wrapSpans([{ text: 'Ctrl+O collapses', style: theme.muted }], { width, firstPrefix: [pad] }));
    } else if (this.resultText) {
      for (const line of sanitizeToolBody(this.resultText)
        .split('\n')
        .slice(0, RESULT_MAX_ROWS + 1)) {
        rows.push(...wrapSpans([{ text: line, style: tone }], { width, firstPrefix: [pad], restPrefix: [pad] }));
      }
    }
    return rows;
  }
}
const STATUS_MARK: Record<ToolStatus, { dot: string; style: Style }> = {
  pending: { dot: '○', style: theme.muted },
  running: { dot: '●', style: theme.warn },
  done: { dot: '●', style: theme.success },
  failed: { dot: '●', style: theme.error },
  denied: { dot: '●', style: theme.error },
};
