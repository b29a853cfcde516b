/**
 * Issue 19, item 6: screenshots at 1280 and 390 px compared structurally: the boxes of the
 * header's parts, the transcript's items and the dock do not overlap, and the composer and a
 * waiting approval are inside the viewport.
 */
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { pageHarness } from './page-harness.js';

const { setup } = pageHarness();

interface Box {
  readonly name: string;
  readonly x: number;
  readonly y: number;
  readonly w: number;
  readonly h: number;
}

/** The boxes of a set of elements, in viewport coordinates. */
function boxes(page: Page, selector: string): Promise<Box[]> {
  return page.locator(selector).evaluateAll((nodes) =>
    nodes
      .filter((n) => (n as HTMLElement).offsetParent !== null || getComputedStyle(n).position === 'fixed')
      .map((n, i) => {
        const r = n.getBoundingClientRect();
        const name = `${n.tagName.toLowerCase()}${n.id ? `#${n.id}` : ''}.${(n.className || '').toString().split(' ')[0]}[${i}]`;
        return { name, x: r.x, y: r.y, w: r.width, h: r.height };
      }),
  );
}

function overlaps(list: readonly Box[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < list.length; i++) {
    for (let j = i + 1; j < list.length; j++) {
      const a = list[i] as Box;
      const b = list[j] as Box;
      const x = Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x);
      const y = Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y);
      // A shared edge (rounding) is not an overlap.
      if (x > 1 && y > 1) out.push(`${a.name} overlaps ${b.name}`);
    }
  }
  return out;
}

const inside = (box: Box, width: number, height: number): boolean =>
  box.x >= 0 && box.y >= 0 && box.x + box.w <= width + 0.5 && box.y + box.h <= height + 0.5;

const LONG = Array.from({ length: 30 }, (_, i) => `Paragraph ${i + 1}: some words to fill the line.`).join('\n\n');

for (const viewport of [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
]) {
  describe(`issue 19: layout at ${viewport.width} px`, () => {
    it(`issue 19: at ${viewport.width} px nothing overlaps, and the composer and a waiting approval are in the viewport`, async () => {
      const { page } = await setup({
        viewport,
        replies: [
          { text: LONG, toolCalls: [{ id: 'call_1', name: 'write', arguments: { path: 'a.txt', contents: 'a\nb\nc\n' } }] },
          { text: 'done' },
        ],
      });
      await page.getByRole('textbox', { name: 'Message' }).fill('Fill the page.');
      await page.getByRole('textbox', { name: 'Message' }).press('Enter');
      await expect.poll(() => page.getByRole('alertdialog', { name: 'Approve write?' }).count()).toBe(1);
      const dir = mkdtempSync(join(tmpdir(), 'crystal-shot-'));
      const shot = join(dir, `page-${viewport.width}.png`);
      await page.screenshot({ path: shot });
      expect(statSync(shot).size).toBeGreaterThan(1000);

      // The header's parts sit side by side; the header, the dock and the side panel do not cover each other.
      expect(overlaps(await boxes(page, 'header.top > *:not(nav), header.top nav > *'))).toEqual([]);
      const [header] = await boxes(page, 'header.top');
      const [dock] = await boxes(page, '#dock');
      expect(overlaps([header as Box, dock as Box])).toEqual([]);
      // The dock's parts are stacked, not piled.
      expect(overlaps(await boxes(page, '#dock > *'))).toEqual([]);
      expect(overlaps(await boxes(page, '#composer > *'))).toEqual([]);
      // Transcript items do not overlap each other.
      expect(overlaps(await boxes(page, '#transcript > *'))).toEqual([]);
      // In view: the composer's box, the approval card and its buttons.
      for (const selector of ['#composer', '.approval', '.approval button']) {
        for (const box of await boxes(page, selector)) expect(inside(box, viewport.width, viewport.height), box.name).toBe(true);
      }
      // Items of the transcript that are on screen are not hidden under the header or the dock
      // at their visible centre line: what is at that point is the item itself.
      const covered = await page.evaluate(() => {
        const out: string[] = [];
        for (const n of document.querySelectorAll('#transcript > *')) {
          const r = n.getBoundingClientRect();
          const header = document.querySelector('header.top')?.getBoundingClientRect();
          const dock = document.getElementById('dock')?.getBoundingClientRect();
          const top = Math.max(r.top, header?.bottom ?? 0);
          const bottom = Math.min(r.bottom, dock?.top ?? innerHeight);
          if (bottom - top < 4) continue;
          const y = (top + bottom) / 2;
          const at = document.elementFromPoint(r.left + Math.min(8, r.width / 2), y);
          if (!at || !n.contains(at)) out.push(`${n.className} at ${Math.round(y)}: ${at?.tagName}.${at?.className}`);
        }
        return out;
      });
      expect(covered).toEqual([]);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width);
    });
  });
}
