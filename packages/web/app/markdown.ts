/**
 * Model text as HTML (issue 19): GitHub-flavoured Markdown from `marked` (tables, nested and
 * task lists, strikethrough, links, fenced code), code highlighted by highlight.js (a few
 * languages, bundled: the page loads no remote code), and everything passed through DOMPurify.
 *
 * Model output is untrusted, so on top of the sanitizer the renderer itself:
 * - shows raw HTML as text (it is never parsed as markup);
 * - keeps links only for http, https and mailto addresses (no `javascript:`, no `data:`);
 * - never makes an `<img>`: a Markdown image becomes its alt text and address as text, so a
 *   model cannot make the page fetch anything (the host's CSP forbids it as well).
 */
import DOMPurify from 'dompurify';
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';
import { Marked, type Tokens } from 'marked';

for (const [name, language] of Object.entries({
  bash,
  css,
  diff,
  go,
  javascript,
  json,
  python,
  rust,
  sql,
  typescript,
  xml,
  yaml,
})) {
  hljs.registerLanguage(name, language);
}
hljs.registerAliases(['sh', 'shell', 'zsh', 'console'], { languageName: 'bash' });
hljs.registerAliases(['html', 'svg'], { languageName: 'xml' });

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const SAFE_URL = /^(?:https?:\/\/|mailto:)/i;

const marked = new Marked({
  gfm: true,
  breaks: false,
  renderer: {
    html({ text }: Tokens.HTML | Tokens.Tag): string {
      return escapeHtml(text);
    },
    image({ href, text }: Tokens.Image): string {
      const where = href ? ` (${escapeHtml(href)})` : '';
      return `<span class="image-ref">[image: ${escapeHtml(text)}]${where}</span>`;
    },
    link({ href, title, tokens }: Tokens.Link): string {
      const label = this.parser.parseInline(tokens);
      if (!SAFE_URL.test(href)) return label;
      const titled = title ? ` title="${escapeHtml(title)}"` : '';
      return `<a href="${escapeHtml(href)}"${titled}>${label}</a>`;
    },
    code({ text, lang }: Tokens.Code): string {
      const name = (lang ?? '').trim().split(/\s+/)[0]?.toLowerCase() ?? '';
      const known = name !== '' && hljs.getLanguage(name) !== undefined;
      const body = known ? hljs.highlight(text, { language: name, ignoreIllegals: true }).value : escapeHtml(text);
      const label = name ? ` data-lang="${escapeHtml(name)}"` : '';
      return `<pre${label}><code class="hljs${known ? ` language-${escapeHtml(name)}` : ''}">${body}</code></pre>\n`;
    },
    checkbox({ checked }: Tokens.Checkbox): string {
      return `<input type="checkbox" disabled${checked ? ' checked' : ''}> `;
    },
  },
});

const purify = DOMPurify(window);
purify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    const href = node.getAttribute('href') ?? '';
    if (!SAFE_URL.test(href)) node.removeAttribute('href');
    node.setAttribute('rel', 'noopener noreferrer');
    node.setAttribute('target', '_blank');
  }
  if (node.tagName === 'INPUT') {
    if (node.getAttribute('type') !== 'checkbox') node.remove();
    else node.setAttribute('disabled', '');
  }
});

const PURIFY = {
  FORBID_TAGS: [
    'img',
    'image',
    'svg',
    'math',
    'style',
    'form',
    'button',
    'iframe',
    'object',
    'embed',
    'video',
    'audio',
    'source',
  ],
  FORBID_ATTR: ['style', 'src', 'srcset', 'action', 'formaction', 'background', 'poster'],
  // Links are checked by the hook above (SAFE_URL); a custom ALLOWED_URI_REGEXP would also strip `type`.
  ADD_ATTR: ['target'],
};

/** Markdown to sanitized HTML. */
export function renderMarkdown(source: string): string {
  const html = marked.parse(source, { async: false });
  return purify.sanitize(html, PURIFY);
}
