/**
 * A small Markdown renderer for model text. Every character of the input is HTML-escaped
 * before any markup is added, so model output can never inject HTML; links are kept only for
 * http, https and mailto addresses. Covers what models write: fenced code, headings, lists,
 * block quotes, rules, paragraphs, and inline code, bold, italics and links.
 */

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const SAFE_URL = /^(https?:\/\/|mailto:)[^\s]*$/i;

/** Inline markup of one line or paragraph: code spans first, then links, bold and italics on escaped text. */
export function renderInline(text: string): string {
  let out = '';
  const parts = text.split(/(`+[^`]*`+)/g);
  for (const part of parts) {
    const code = /^(`+)([^`]*)\1$/.exec(part);
    if (code) {
      out += `<code>${escapeHtml(code[2] ?? '')}</code>`;
      continue;
    }
    out += formatSpans(part);
  }
  return out;
}

function formatSpans(raw: string): string {
  let out = '';
  let at = 0;
  const link = /\[([^\]\n]+)\]\(([^)\s]+)\)/g;
  for (let m = link.exec(raw); m; m = link.exec(raw)) {
    out += emphasis(escapeHtml(raw.slice(at, m.index)));
    const label = emphasis(escapeHtml(m[1] ?? ''));
    const url = m[2] ?? '';
    out += SAFE_URL.test(url) ? `<a href="${escapeHtml(url)}" rel="noopener noreferrer" target="_blank">${label}</a>` : label;
    at = m.index + m[0].length;
  }
  return out + emphasis(escapeHtml(raw.slice(at)));
}

function emphasis(escaped: string): string {
  return escaped
    .replace(/\*\*(?=\S)([^*]*?\S)\*\*/g, '<strong>$1</strong>')
    .replace(/__(?=\S)([^_]*?\S)__/g, '<strong>$1</strong>')
    .replace(/(^|[^*\w])\*(?=\S)([^*\n]*?\S)\*(?!\*)/g, '$1<em>$2</em>')
    .replace(/(^|[^_\w])_(?=\S)([^_\n]*?\S)_(?![_\w])/g, '$1<em>$2</em>');
}

type Block =
  | { kind: 'code'; lang: string; lines: string[] }
  | { kind: 'heading'; level: number; text: string }
  | { kind: 'list'; ordered: boolean; items: string[] }
  | { kind: 'quote'; lines: string[] }
  | { kind: 'rule' }
  | { kind: 'paragraph'; lines: string[] };

function parseBlocks(source: string): Block[] {
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  const blocks: Block[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] as string;
    const fence = /^\s{0,3}(```+|~~~+)\s*([\w+-]*)/.exec(line);
    if (fence) {
      const marker = fence[1] as string;
      const code: string[] = [];
      i++;
      while (i < lines.length && !(lines[i] as string).trimStart().startsWith(marker)) code.push(lines[i++] as string);
      i++;
      blocks.push({ kind: 'code', lang: fence[2] ?? '', lines: code });
      continue;
    }
    if (line.trim() === '') {
      i++;
      continue;
    }
    const heading = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      blocks.push({ kind: 'heading', level: (heading[1] as string).length, text: heading[2] ?? '' });
      i++;
      continue;
    }
    if (/^\s{0,3}([-*_])(\s*\1){2,}\s*$/.test(line)) {
      blocks.push({ kind: 'rule' });
      i++;
      continue;
    }
    const item = /^\s{0,3}([-*+]|\d{1,9}[.)])\s+(.*)$/.exec(line);
    if (item) {
      const ordered = /\d/.test(item[1] as string);
      const items: string[] = [];
      while (i < lines.length) {
        const next = /^\s{0,3}([-*+]|\d{1,9}[.)])\s+(.*)$/.exec(lines[i] as string);
        if (next && /\d/.test(next[1] as string) === ordered) items.push(next[2] ?? '');
        else if (items.length > 0 && /^\s{2,}\S/.test(lines[i] as string))
          items[items.length - 1] += ` ${(lines[i] as string).trim()}`;
        else break;
        i++;
      }
      blocks.push({ kind: 'list', ordered, items });
      continue;
    }
    if (/^\s{0,3}>/.test(line)) {
      const quote: string[] = [];
      while (i < lines.length && /^\s{0,3}>/.test(lines[i] as string))
        quote.push((lines[i++] as string).replace(/^\s{0,3}>\s?/, ''));
      blocks.push({ kind: 'quote', lines: quote });
      continue;
    }
    const paragraph: string[] = [];
    while (i < lines.length && (lines[i] as string).trim() !== '' && !startsBlock(lines[i] as string))
      paragraph.push(lines[i++] as string);
    if (paragraph.length === 0) paragraph.push(lines[i++] as string);
    blocks.push({ kind: 'paragraph', lines: paragraph });
  }
  return blocks;
}

function startsBlock(line: string): boolean {
  return /^\s{0,3}(```|~~~|#{1,6}\s|>|[-*+]\s|\d{1,9}[.)]\s)/.test(line);
}

/** Markdown to HTML in which every piece of the source is escaped. */
export function renderMarkdown(source: string): string {
  return parseBlocks(source).map(renderBlock).join('\n');
}

function renderBlock(block: Block): string {
  switch (block.kind) {
    case 'code': {
      const lang = block.lang ? ` data-lang="${escapeHtml(block.lang)}"` : '';
      return `<pre${lang}><code>${escapeHtml(block.lines.join('\n'))}</code></pre>`;
    }
    case 'heading':
      return `<h${block.level}>${renderInline(block.text)}</h${block.level}>`;
    case 'rule':
      return '<hr>';
    case 'list': {
      const tag = block.ordered ? 'ol' : 'ul';
      return `<${tag}>${block.items.map((item) => `<li>${renderInline(item)}</li>`).join('')}</${tag}>`;
    }
    case 'quote':
      return `<blockquote>${renderMarkdown(block.lines.join('\n'))}</blockquote>`;
    case 'paragraph':
      return `<p>${block.lines.map(renderInline).join('<br>')}</p>`;
  }
}
