/**
 * Issue 19, item 5: the page at phone width (390 px: the header on one line with a short session
 * id, nothing wider than the screen, touch-size targets) and accessibility (landmarks, labels,
 * image names, visible focus, a polite live transcript), with an axe-core pass that finds
 * nothing serious or critical on the main views.
 */
import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { pageHarness } from './page-harness.js';
import { png } from './support.js';

const { setup } = pageHarness();

const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 800 };

const RICH = [
  '## Result',
  '',
  '| a very long column heading | another long heading | third |',
  '|---|---|---|',
  '| `value_with_a_long_name_here` | text | 3 |',
  '',
  '```ts',
  `const aVeryLongLineOfCodeThatIsWiderThanAnyPhoneScreen = "${'x'.repeat(120)}";`,
  '```',
  '',
  'A link to [somewhere](https://example.com/a/very/long/path/that/goes/on/and/on).',
].join('\n');

async function serious(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).analyze();
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
}

const send = async (page: Page, text: string) => {
  await page.getByRole('textbox', { name: 'Message' }).fill(text);
  await page.getByRole('textbox', { name: 'Message' }).press('Enter');
};

describe('issue 19: phone width and accessibility', () => {
  it('issue 19: at 390 px the header is one line with a short session id, nothing overflows, and targets are touch-size', async () => {
    const { page } = await setup({
      viewport: PHONE,
      replies: [
        { text: RICH, toolCalls: [{ id: 'call_1', name: 'bash', arguments: { command: `echo ${'long '.repeat(40)}` } }] },
        { text: 'done' },
      ],
    });
    await page
      .locator('#picker')
      .setInputFiles([{ name: 'shot.png', mimeType: 'image/png', buffer: await png(40, 30, [1, 2, 3]) }]);
    await send(page, 'Show me everything.');
    await expect.poll(() => page.getByRole('alertdialog', { name: 'Approve bash?' }).count()).toBe(1);

    const header = await page.locator('header.top').evaluate((h) => {
      const kids = [...h.querySelectorAll(':scope > *, .controls > *')].filter((k) => (k as HTMLElement).offsetParent !== null);
      const boxes = kids.map((k) => k.getBoundingClientRect());
      return {
        height: h.getBoundingClientRect().height,
        tops: boxes.map((b) => Math.round(b.top + b.height / 2)),
        right: Math.max(...boxes.map((b) => b.right)),
        session: document.getElementById('session')?.textContent ?? '',
      };
    });
    expect(header.height).toBeLessThan(60);
    expect(Math.max(...header.tops) - Math.min(...header.tops)).toBeLessThanOrEqual(4);
    expect(header.right).toBeLessThanOrEqual(PHONE.width);
    expect(header.session).toMatch(/^….{6}$/);

    // Nothing is wider than the screen: the page does not scroll sideways.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    // Touch targets of the composer, the tray, the approval card and the header: at least 44 px.
    const small = await page.evaluate(() =>
      [...document.querySelectorAll('button, select, textarea')]
        .filter((n) => (n as HTMLElement).offsetParent !== null)
        .map((n) => ({ name: n.getAttribute('aria-label') ?? n.textContent, box: n.getBoundingClientRect() }))
        .filter(({ box }) => box.height < 44 || box.width < 44)
        .map(({ name, box }) => `${name}: ${Math.round(box.width)}x${Math.round(box.height)}`),
    );
    expect(small).toEqual([]);
    expect(await serious(page)).toEqual([]);
  });

  it('issue 19: landmarks, labels, image names, a polite live transcript and a visible focus ring', async () => {
    const { page } = await setup({ viewport: DESKTOP, replies: [{ text: 'ok' }] });
    expect(await page.getByRole('banner').count()).toBe(1);
    expect(await page.getByRole('main').count()).toBe(1);
    expect(await page.getByRole('navigation', { name: 'Session controls' }).count()).toBe(1);
    expect(await page.getByRole('form', { name: 'Message composer' }).count()).toBe(1);
    const log = page.getByRole('log', { name: 'Conversation' });
    expect(await log.getAttribute('aria-live')).toBe('polite');
    await page
      .locator('#picker')
      .setInputFiles([{ name: 'diagram.png', mimeType: 'image/png', buffer: await png(40, 30, [9, 9, 9]) }]);
    await send(page, 'Look.');
    await expect.poll(() => log.getByRole('img', { name: 'diagram.png' }).count()).toBe(1);
    // Keyboard focus is drawn.
    await page.keyboard.press('Tab');
    const outline = await page.evaluate(() => {
      const a = document.activeElement as HTMLElement;
      const style = getComputedStyle(a);
      return { width: style.outlineWidth, style: style.outlineStyle };
    });
    expect(outline.style).not.toBe('none');
    expect(Number.parseFloat(outline.width)).toBeGreaterThanOrEqual(2);
  });

  for (const [label, viewport] of [
    ['1280 px', DESKTOP],
    ['390 px', PHONE],
  ] as const) {
    it(`issue 19: axe finds nothing serious or critical on the main views at ${label}`, async () => {
      const { page } = await setup({
        viewport,
        replies: [
          { text: RICH, toolCalls: [{ id: 'call_1', name: 'write', arguments: { path: 'a.txt', contents: 'a\nb\n' } }] },
          {
            toolCalls: [
              {
                id: 'call_q',
                name: 'question',
                arguments: { questions: [{ header: 'Pick', question: 'Which one?', options: [{ label: 'A' }, { label: 'B' }] }] },
              },
            ],
          },
          { text: 'All done.' },
        ],
      });
      // The empty page.
      expect(await serious(page)).toEqual([]);
      // A transcript with Markdown, a tool card and an approval waiting.
      await send(page, 'Go.');
      const approval = page.getByRole('alertdialog', { name: 'Approve write?' });
      await expect.poll(() => approval.count()).toBe(1);
      expect(await serious(page)).toEqual([]);
      await approval.getByRole('button', { name: 'Allow once' }).click();
      // A question waiting.
      const question = page.getByRole('form', { name: 'Question from the assistant' });
      await expect.poll(() => question.count()).toBe(1);
      expect(await serious(page)).toEqual([]);
      await page.keyboard.press('Enter');
      await expect.poll(() => page.locator('article.assistant').last().textContent()).toContain('All done.');
      // The help, the session browser.
      await send(page, '/help');
      await expect.poll(() => page.getByRole('region', { name: 'Help' }).count()).toBe(1);
      expect(await serious(page)).toEqual([]);
      await page.getByRole('button', { name: 'Sessions' }).click();
      await expect.poll(() => page.getByRole('dialog', { name: 'Sessions' }).isVisible()).toBe(true);
      expect(await serious(page)).toEqual([]);
    });
  }
});
