/**
 * Issue 19, item 2: model Markdown from a maintained parser, sanitized, highlighted, with a
 * copy button, rendered incrementally while it streams; hostile Markdown runs no script and
 * makes the page request nothing beyond its own host.
 */
import { describe, expect, it } from 'vitest';
import { pageHarness } from './page-harness.js';

const { setup, context } = pageHarness();

const RICH = [
  '## Plan',
  '',
  '| file | change |',
  '|------|--------|',
  '| a.ts | add `x` |',
  '| b.ts | ~~drop~~ keep |',
  '',
  '- [x] read the code',
  '- [ ] write the test',
  '  - nested one',
  '  - nested two',
  '',
  'See [the docs](https://example.com/docs) and ~~old~~ new.',
  '',
  '```ts',
  'const answer: number = 42;',
  '```',
].join('\n');

describe('issue 19: Markdown in the page', () => {
  it('issue 19: tables, task and nested lists, strikethrough, links and highlighted code with a copy button', async () => {
    const { page } = await setup({ replies: [{ text: RICH }] });
    await context().grantPermissions(['clipboard-read', 'clipboard-write']);
    await page.getByRole('textbox', { name: 'Message' }).fill('Show me.');
    await page.getByRole('textbox', { name: 'Message' }).press('Enter');
    const answer = page.locator('article.assistant').last();
    await expect.poll(() => answer.locator('pre code').count()).toBe(1);
    await expect.poll(() => answer.locator('h2').textContent()).toBe('Plan');
    expect(await answer.locator('table th').allTextContents()).toEqual(['file', 'change']);
    expect(await answer.locator('table td code').textContent()).toBe('x');
    expect(await answer.locator('del').allTextContents()).toEqual(['drop', 'old']);
    expect(
      await answer.locator('input[type=checkbox]').evaluateAll((n) => n.map((i) => (i as HTMLInputElement).checked)),
    ).toEqual([true, false]);
    expect(await answer.locator('input[type=checkbox][disabled]').count()).toBe(2);
    expect(await answer.locator('ul ul li').allTextContents()).toEqual(['nested one', 'nested two']);
    const link = answer.getByRole('link', { name: 'the docs' });
    expect(await link.getAttribute('href')).toBe('https://example.com/docs');
    expect(await link.getAttribute('rel')).toBe('noopener noreferrer');
    // highlight.js marked the keyword and the number.
    expect(await answer.locator('pre code .hljs-keyword').first().textContent()).toBe('const');
    expect(await answer.locator('pre code .hljs-number').textContent()).toBe('42');
    await answer.getByRole('button', { name: 'Copy code' }).click();
    await expect.poll(() => answer.getByRole('button', { name: 'Copy code' }).textContent()).toBe('Copied');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe('const answer: number = 42;');
  });

  it('issue 19: hostile Markdown runs no script, keeps no event attribute or unsafe link, and no request leaves 127.0.0.1', async () => {
    const requests: string[] = [];
    const hostile = [
      '<script>window.pwned = "script"</script>',
      '<img src="http://203.0.113.9/track.png" onerror="window.pwned = \'img\'">',
      '<svg onload="window.pwned = \'svg\'"><circle r="1"/></svg>',
      '<iframe src="https://203.0.113.9/"></iframe>',
      '<a href="javascript:window.pwned=1" onclick="window.pwned = \'click\'">raw link</a>',
      '<div style="background:url(https://203.0.113.9/bg.png)" onmouseover="window.pwned=1">styled</div>',
      '',
      '[js link](javascript:window.pwned=2) [data link](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)',
      '[vb](vbscript:msgbox) [spaced]( javascript:alert(1)) [entity](&#106;avascript:alert(1))',
      '<javascript:alert(1)> <data:text/html,hi>',
      '',
      '![remote image](https://203.0.113.9/pixel.png) ![data image](data:image/png;base64,iVBORw0KGgo=)',
      '',
      '[ref link][evil]',
      '',
      '[evil]: javascript:window.pwned=3',
      '',
      '```html',
      '<img src=x onerror="window.pwned=4">',
      '```',
    ].join('\n');
    const { page, web } = await setup({
      replies: [{ text: hostile }],
      beforeOpen: async (p) => {
        p.on('request', (r) => requests.push(r.url()));
        await p.route('**/*', (route) => {
          const url = route.request().url();
          return url.startsWith('http://127.0.0.1:') ? route.continue() : route.abort();
        });
      },
    });
    await page.getByRole('textbox', { name: 'Message' }).fill('Be hostile.');
    await page.getByRole('textbox', { name: 'Message' }).press('Enter');
    const answer = page.locator('article.assistant').last();
    await expect.poll(() => answer.locator('pre code').count()).toBe(1);
    await expect.poll(() => page.locator('#activity').textContent()).toBe('Ready');
    // Hover and click what is there, as a person would.
    for (const link of await answer.locator('a').all()) await link.hover();
    await answer.getByText('styled').hover();

    expect(await page.evaluate(() => (window as unknown as { pwned?: unknown }).pwned)).toBeUndefined();
    const found = await answer.evaluate((root) => {
      const all = [...root.querySelectorAll('*')];
      return {
        tags: [...new Set(all.map((n) => n.tagName.toLowerCase()))].sort(),
        eventAttributes: all.flatMap((n) => [...n.attributes].map((a) => a.name).filter((name) => name.startsWith('on'))),
        styles: all.filter((n) => n.hasAttribute('style')).length,
        hrefs: [...root.querySelectorAll('a')].map((a) => a.getAttribute('href')),
      };
    });
    for (const tag of ['script', 'img', 'svg', 'iframe', 'style']) expect(found.tags).not.toContain(tag);
    expect(found.eventAttributes).toEqual([]);
    expect(found.styles).toBe(0);
    for (const href of found.hrefs) expect(href === null || /^(https?:|mailto:)/.test(href), String(href)).toBe(true);
    // The raw HTML is shown as text, and the code block as code.
    expect(await answer.textContent()).toContain('<script>window.pwned = "script"</script>');
    expect(await answer.locator('pre code').textContent()).toContain('<img src=x onerror="window.pwned=4">');
    expect(await answer.textContent()).toContain('[image: remote image]');
    expect(requests.length).toBeGreaterThan(0);
    for (const url of requests) expect(url.startsWith(`${web.origin}/`), url).toBe(true);
  });

  it('issue 19: while a message streams, earlier messages and its finished blocks are not rendered again', async () => {
    const paragraphs = Array.from({ length: 12 }, (_, i) => `Paragraph ${i + 1} with **bold** text.\n\n`);
    const { page } = await setup({ replies: [{ text: 'The first answer.' }, { text: paragraphs, delayMs: 40 }] });
    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill('One.');
    await box.press('Enter');
    await expect.poll(() => page.locator('article.assistant').textContent()).toContain('The first answer.');
    await expect.poll(() => page.locator('#activity').textContent()).toBe('Ready');
    await page.evaluate(() => {
      const w = window as unknown as { removals: string[] };
      w.removals = [];
      new MutationObserver((records) => {
        for (const r of records) {
          if (r.type !== 'childList' || r.removedNodes.length === 0) continue;
          const where = r.target as Element;
          const kind = where.closest('.tail')
            ? 'tail'
            : where.closest('.frozen')
              ? 'frozen'
              : where.closest('article.assistant') === document.querySelector('article.assistant')
                ? 'first message'
                : where.classList.contains('markdown')
                  ? 'message body'
                  : 'other';
          w.removals.push(kind);
        }
      }).observe(document.getElementById('transcript') as Element, { subtree: true, childList: true });
    });
    await box.fill('Two.');
    await box.press('Enter');
    const live = page.locator('article.assistant').nth(1);
    await expect.poll(() => live.textContent()).toContain('Paragraph 12');
    await expect.poll(() => page.locator('#activity').textContent()).toBe('Ready');
    const removals = await page.evaluate(() => (window as unknown as { removals: string[] }).removals);
    // The tail was rendered again as text came in; the frozen blocks, the message body and the
    // earlier message never were, not even when the message was complete.
    expect(removals).toContain('tail');
    expect(removals.filter((kind) => kind !== 'tail')).toEqual([]);
    expect(await live.locator('.frozen .chunk').count()).toBeGreaterThanOrEqual(2);
    expect(await live.locator('p').count()).toBe(12);
    expect(await live.locator('strong').count()).toBe(12);
  });
});
