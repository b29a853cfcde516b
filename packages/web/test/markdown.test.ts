/** The page's Markdown renderer (WEBX-1): model text is escaped before any markup is added. */
import { describe, expect, it } from 'vitest';
import { escapeHtml, renderInline, renderMarkdown } from '../app/markdown.js';

describe('renderMarkdown', () => {
  it('WEBX-1: escapes every HTML character of model text', () => {
    const html = renderMarkdown('<script>alert(1)</script> & <img src=x onerror=alert(1)> "q" \'s\'');
    expect(html).not.toMatch(/<script|<img/);
    expect(html).toBe(
      '<p>&#60;script&#62;alert(1)&#60;/script&#62; &#38; &#60;img src=x onerror=alert(1)&#62; &#34;q&#34; &#39;s&#39;</p>',
    );
  });

  it('WEBX-1: keeps links only for http, https and mailto', () => {
    expect(renderInline('[a](https://example.com/x?y=1&z=2)')).toBe(
      '<a href="https://example.com/x?y=1&#38;z=2" rel="noopener noreferrer" target="_blank">a</a>',
    );
    expect(renderInline('[a](javascript:alert(1))')).not.toContain('<a');
    expect(renderInline('[a](data:text/html,hi)')).not.toContain('<a');
    expect(renderInline('[a]("onmouseover=alert(1))')).not.toContain('<a');
  });

  it('renders fenced code, headings, lists, quotes, rules and inline marks', () => {
    const html = renderMarkdown(
      '# Title\n\nSome **bold**, *em* and `a < b`.\n\n```ts\nconst x = 1 < 2;\n```\n\n- one\n- two\n\n1. first\n2. second\n\n> quoted\n\n---',
    );
    expect(html).toContain('<h1>Title</h1>');
    expect(html).toContain('<p>Some <strong>bold</strong>, <em>em</em> and <code>a &#60; b</code>.</p>');
    expect(html).toContain('<pre data-lang="ts"><code>const x = 1 &#60; 2;</code></pre>');
    expect(html).toContain('<ul><li>one</li><li>two</li></ul>');
    expect(html).toContain('<ol><li>first</li><li>second</li></ol>');
    expect(html).toContain('<blockquote><p>quoted</p></blockquote>');
    expect(html).toContain('<hr>');
  });

  it('leaves snake_case and lone stars alone, and keeps an unclosed fence as code while it streams', () => {
    expect(renderInline('a snake_case_name and 2 * 3 * 4')).toBe('a snake_case_name and 2 * 3 * 4');
    expect(renderMarkdown('```\n<b>partial')).toBe('<pre><code>&#60;b&#62;partial</code></pre>');
    expect(escapeHtml('&')).toBe('&#38;');
  });
});
