/**
 * Markdown to terminal rows (TUI-2): headings, paragraphs with bold/italic/inline code/links,
 * lists, block quotes, fenced code with highlighting, tables and rules. `marked`'s lexer is
 * imported lazily, so the first frame never waits for it; until it is loaded, text is
 * wrapped plain and the caller re-lays it out when `loadMarkdown()` resolves.
 */
import type { Token, Tokens } from 'marked';
import { highlightLine } from './highlight.js';
import { sanitize } from './sanitize.js';
import { merge, type Style, theme } from './style.js';
import { type Carry, type Span, spansWidth, wrapHard, wrapSpans, wrapSpansOpen } from './wrap.js';

type Lexer = (src: string) => Token[];

let lexer: Lexer | undefined;
let loading: Promise<void> | undefined;
/** Whether the lexer has run in this process (its one-off cost is paid). */
let lexed = false;

/** Starts loading the lexer (once); resolves when Markdown can be rendered. */
export function loadMarkdown(): Promise<void> {
  loading ??= import('marked').then((m) => {
    const options = { gfm: true, breaks: false } as const;
    lexer = (src) => {
      lexed = true;
      return m.lexer(src, options);
    };
  });
  return loading;
}

export function markdownReady(): boolean {
  return lexer !== undefined;
}

/**
 * One of each construct a reply uses: its first lex compiles each of the lexer's expressions
 * (V8 compiles a regular expression to machine code on its second use, and marked's block rules
 * are large), 40-60 ms on this project's machines against 0.1-1 ms for the next text.
 */
const WARM_UP = [
  '# A',
  '',
  'Some **bold** _it_ `code` [l](u) www.x.y text.',
  'more',
  '',
  '- a',
  '1. b',
  '',
  '> q',
  '',
  '```',
  'x',
  '```',
  '',
  '| a | b |',
  '|---|---|',
  '| 1 | 2 |',
  '',
  '---',
  '<b>x</b>',
  'end',
].join('\n');

/**
 * Pays the lexer's one-off cost now, unless text was lexed already: for idle time that comes
 * before Markdown is needed (a request waiting for its first token), so the first reply's first
 * frame does not carry it (issue 22). Whether it ran (false: not loaded yet, or lexed already).
 */
export function warmMarkdown(): boolean {
  if (!lexer || lexed) return false;
  lexer(WARM_UP);
  return true;
}

/** Whether the lexer has run in this process. */
export function markdownWarm(): boolean {
  return lexed;
}

/** The block tokens of `src`, or undefined before the lexer is loaded. */
export function lexMarkdown(src: string): Token[] | undefined {
  return lexer?.(src);
}

/** Renders a whole Markdown text into rows of at most `width` cells. */
export function renderMarkdown(src: string, width: number): string[] {
  const text = sanitize(src);
  const tokens = lexer?.(text);
  if (!tokens) return renderPlain(text, width);
  return renderBlocks(tokens, width);
}

/** Plain wrapped text, one paragraph per source line (the fallback before the lexer loads). */
export function renderPlain(text: string, width: number, style?: Style): string[] {
  const rows: string[] = [];
  for (const line of text.split('\n')) rows.push(...wrapSpans([{ text: line, style }], { width }));
  return rows;
}

interface Prefixes {
  readonly first: readonly Span[];
  readonly rest: readonly Span[];
}

const NONE: Prefixes = { first: [], rest: [] };
/** Style constants for `merge` (one object each, so merged styles are made once). */
const ITALIC: Style = { italic: true };
const STRIKE: Style = { strike: true };

/** Renders block tokens; one blank row between blocks. */
export function renderBlocks(tokens: readonly Token[], width: number, prefixes: Prefixes = NONE, gap = true): string[] {
  const rows: string[] = [];
  let first = true;
  for (const token of tokens) {
    if (token.type === 'space') continue;
    const p = first ? prefixes : { first: prefixes.rest, rest: prefixes.rest };
    const block = renderBlock(token, width, p);
    if (block.length === 0) continue;
    if (!first && gap) rows.push(paintPrefix(prefixes.rest));
    rows.push(...block);
    first = false;
  }
  return rows;
}

function paintPrefix(prefix: readonly Span[]): string {
  return wrapSpans(prefix, { width: 1000 })[0] ?? '';
}

function renderBlock(token: Token, width: number, p: Prefixes): string[] {
  switch (token.type) {
    case 'heading': {
      const t = token as Tokens.Heading;
      const style = t.depth <= 2 ? theme.heading : theme.bold;
      return wrapSpans(inline(t.tokens, style), { width, firstPrefix: p.first, restPrefix: p.rest });
    }
    case 'paragraph':
      return wrapSpans(inline((token as Tokens.Paragraph).tokens), { width, firstPrefix: p.first, restPrefix: p.rest });
    case 'text': {
      const t = token as Tokens.Text;
      const spans = t.tokens ? inline(t.tokens) : [{ text: decode(t.text) }];
      return wrapSpans(spans, { width, firstPrefix: p.first, restPrefix: p.rest });
    }
    case 'code':
      return renderCode((token as Tokens.Code).text, (token as Tokens.Code).lang ?? '', width, p);
    case 'list':
      return renderList(token as Tokens.List, width, p);
    case 'blockquote': {
      const bar: Span = { text: '│ ', style: theme.border };
      return renderBlocks((token as Tokens.Blockquote).tokens, width, { first: [...p.first, bar], rest: [...p.rest, bar] });
    }
    case 'hr':
      return wrapSpans([{ text: '─'.repeat(Math.max(1, width - spansWidth(p.first))), style: theme.border }], {
        width,
        firstPrefix: p.first,
      });
    case 'table':
      return renderTable(token as Tokens.Table, width, p);
    case 'html':
      return renderCode((token as Tokens.HTML).text.replace(/\n$/, ''), '', width, p);
    case 'def':
      return [];
    default: {
      const raw = (token as { raw?: string }).raw ?? '';
      return raw.trim() === '' ? [] : wrapSpans([{ text: raw.trim() }], { width, firstPrefix: p.first, restPrefix: p.rest });
    }
  }
}

/** Fenced code: a gutter, highlighting, hard-wrapped lines (every character kept). */
export function renderCode(text: string, lang: string, width: number, p: Prefixes = NONE): string[] {
  const rows: string[] = [];
  const lines = text.split('\n');
  for (const [i, line] of lines.entries()) rows.push(...renderCodeLine(line, lang, width, i === 0 ? p.first : p.rest, p.rest));
  return rows;
}

export function renderCodeLine(
  line: string,
  lang: string,
  width: number,
  first: readonly Span[],
  rest: readonly Span[],
): string[] {
  const gutter: Span = { text: '│ ', style: theme.border };
  const rows = wrapHard(highlightLine(line, lang.split(/\s/)[0] ?? ''), width, [...rest, gutter]);
  if (first !== rest && rows.length > 0) {
    // The first row carries the block's first prefix (a list bullet) instead of the indent.
    const head = wrapHard(highlightLine(line, lang.split(/\s/)[0] ?? ''), width, [...first, gutter]);
    rows[0] = head[0] ?? '';
  }
  return rows;
}

function renderList(list: Tokens.List, width: number, p: Prefixes): string[] {
  const rows: string[] = [];
  const start = typeof list.start === 'number' ? list.start : 1;
  const labels = list.items.map((item, i) =>
    list.ordered ? `${start + i}. ` : item.task ? (item.checked ? '[x] ' : '[ ] ') : '• ',
  );
  const indent = Math.max(...labels.map((l) => l.length));
  for (const [i, item] of list.items.entries()) {
    const label = (labels[i] as string).padEnd(list.ordered ? indent : (labels[i] as string).length);
    const bullet: Span = { text: label, style: theme.accent };
    const pad: Span = { text: ' '.repeat(label.length) };
    const tokens = item.tokens.filter((t) => t.type !== 'checkbox');
    const body = renderBlocks(tokens, width, { first: [...p.first, bullet], rest: [...p.rest, pad] }, list.loose);
    if (i > 0 && list.loose) rows.push(paintPrefix(p.rest));
    rows.push(...(body.length > 0 ? body : wrapSpans([bullet], { width, firstPrefix: p.first })));
    p = { first: p.rest, rest: p.rest };
  }
  return rows;
}

function renderTable(table: Tokens.Table, width: number, p: Prefixes): string[] {
  const header = table.header.map((c) => plainText(c.tokens));
  const body = table.rows.map((r) => r.map((c) => plainText(c.tokens)));
  const cols = header.length;
  const widths = Array.from({ length: cols }, (_, i) => Math.max(header[i]?.length ?? 0, ...body.map((r) => r[i]?.length ?? 0)));
  const line = (cells: string[], style?: Style): string[] =>
    wrapSpans(
      cells.flatMap((c, i) => [
        ...(i > 0 ? [{ text: ' │ ', style: theme.border }] : []),
        { text: c.padEnd(widths[i] ?? 0), style },
      ]),
      { width, firstPrefix: p.first, restPrefix: p.rest },
    );
  const rule = widths.map((w) => '─'.repeat(w)).join('─┼─');
  return [
    ...line(header, theme.bold),
    ...wrapSpans([{ text: rule, style: theme.border }], { width, firstPrefix: p.rest }),
    ...body.flatMap((r) => line(r)),
  ];
}

/** Inline tokens → styled spans. */
export function inline(tokens: readonly Token[] | undefined, style?: Style): Span[] {
  const spans: Span[] = [];
  for (const token of tokens ?? []) {
    switch (token.type) {
      case 'text':
      case 'escape': {
        const t = token as Tokens.Text;
        if (t.tokens && t.tokens.length > 0) spans.push(...inline(t.tokens, style));
        else spans.push({ text: decode(t.text).replace(/\n/g, ' '), style });
        break;
      }
      case 'strong':
        spans.push(...inline((token as Tokens.Strong).tokens, merge(style, theme.bold)));
        break;
      case 'em':
        spans.push(...inline((token as Tokens.Em).tokens, merge(style, ITALIC)));
        break;
      case 'del':
        spans.push(...inline((token as Tokens.Del).tokens, merge(style, STRIKE)));
        break;
      case 'codespan':
        spans.push({ text: decode((token as Tokens.Codespan).text), style: merge(style, theme.code) });
        break;
      case 'link': {
        const t = token as Tokens.Link;
        spans.push(...inline(t.tokens, merge(style, theme.link)));
        const label = plainText(t.tokens);
        if (t.href && t.href !== label && !t.href.startsWith('mailto:')) spans.push({ text: ` (${t.href})`, style: theme.muted });
        break;
      }
      case 'image':
        spans.push({ text: `[image: ${(token as Tokens.Image).text}]`, style: theme.muted });
        break;
      case 'br':
        spans.push({ text: '\n', style });
        break;
      default:
        spans.push({ text: decode((token as { raw?: string }).raw ?? ''), style });
    }
  }
  return spans;
}

function plainText(tokens: readonly Token[] | undefined): string {
  return inline(tokens)
    .map((s) => s.text)
    .join('');
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', '#39': "'" };

export function decode(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (whole, name: string) => {
    if (name[0] === '#') {
      const code = name[1] === 'x' || name[1] === 'X' ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1));
      return Number.isFinite(code) && code > 31 && code < 0x110000 ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[name.toLowerCase()] ?? whole;
  });
}

/** A paragraph laid out as the continuation of an open row (see markdown-stream.ts). */
export function renderParagraphOpen(
  tokens: readonly Token[],
  width: number,
  carry: Carry | undefined,
): { rows: string[]; carry: Carry } {
  return wrapSpansOpen(inline(tokens), { width, carry });
}
