/**
 * A small, stateless code highlighter for fenced blocks (TUI-2): comments, strings, numbers
 * and common keywords, one line at a time. Good enough to read code at a glance; no grammar.
 */
import { type Style, theme } from './style.js';
import type { Span } from './wrap.js';

const KEYWORDS = new Set(
  (
    'abstract as async await break case catch class const continue def default defer del delete do elif else enum export ' +
    'extends false final finally fn for from func function go if impl implements import in instanceof interface is lambda ' +
    'let loop match mod module mut new nil none not null of or and package private protected pub public raise return self ' +
    'static struct super switch this throw throws trait true try type typeof undefined union unsafe use var void where while ' +
    'with yield None True False'
  ).split(' '),
);

const HASH_COMMENTS = new Set([
  'py',
  'python',
  'sh',
  'bash',
  'zsh',
  'shell',
  'rb',
  'ruby',
  'yaml',
  'yml',
  'toml',
  'r',
  'perl',
  'make',
  'makefile',
  'dockerfile',
  'ini',
  'conf',
]);
const DASH_COMMENTS = new Set(['sql', 'lua', 'haskell', 'hs']);

function commentPattern(lang: string): string {
  const l = lang.toLowerCase();
  if (HASH_COMMENTS.has(l)) return '#.*$';
  if (DASH_COMMENTS.has(l)) return '--.*$';
  return '\\/\\/.*$|\\/\\*.*?(?:\\*\\/|$)';
}

const patterns = new Map<string, RegExp>();

function patternFor(lang: string): RegExp {
  let re = patterns.get(lang);
  if (!re) {
    re = new RegExp(
      `(${commentPattern(lang)})|("(?:[^"\\\\]|\\\\.)*"?|'(?:[^'\\\\]|\\\\.)*'?|\`(?:[^\`\\\\]|\\\\.)*\`?)|(\\b\\d[\\w.]*)|([A-Za-z_$][\\w$]*)`,
      'g',
    );
    patterns.set(lang, re);
  }
  return re;
}

/** Spans of one code line. */
export function highlightLine(line: string, lang: string, base: Style = theme.codeBlock): Span[] {
  if (lang === '' || lang === 'text' || lang === 'txt') return [{ text: line, style: base }];
  const re = patternFor(lang);
  const spans: Span[] = [];
  let at = 0;
  re.lastIndex = 0;
  for (let m = re.exec(line); m !== null; m = re.exec(line)) {
    let style: Style | undefined;
    if (m[1] !== undefined) style = theme.comment;
    else if (m[2] !== undefined) style = theme.string;
    else if (m[3] !== undefined) style = theme.number;
    else if (m[4] !== undefined && KEYWORDS.has(m[4])) style = theme.keyword;
    else continue;
    if (m.index > at) spans.push({ text: line.slice(at, m.index), style: base });
    spans.push({ text: m[0], style });
    at = m.index + m[0].length;
  }
  if (at < line.length) spans.push({ text: line.slice(at), style: base });
  return spans;
}
