/**
 * Issue 19, item 3: tool cards with a one-line summary, arguments as a readable list, coloured
 * diffs numbered from the file, long output behind an expander, and the engine's approval
 * bookkeeping folded into the card it belongs to.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '@crystal/testkit';
import { describe, expect, it } from 'vitest';
import { pageHarness } from './page-harness.js';

const { setup } = pageHarness();

const send = async (page: import('playwright-core').Page, text: string) => {
  await page.getByRole('textbox', { name: 'Message' }).fill(text);
  await page.getByRole('textbox', { name: 'Message' }).press('Enter');
};

describe('issue 19: tool cards', () => {
  it('issue 19: a write card has one summary line, its arguments as a list, a numbered diff, and the approval folded in', async () => {
    const { page, workspace } = await setup({
      replies: [
        { toolCalls: [{ id: 'call_1', name: 'write', arguments: { path: 'note.md', contents: 'one\ntwo\nthree\n' } }] },
        { text: 'Written.' },
      ],
    });
    await send(page, 'Write the note.');
    const card = page.getByRole('article', { name: 'Tool call write' });
    await expect.poll(() => card.getAttribute('data-status')).toBe('waiting');
    await page.getByRole('alertdialog', { name: 'Approve write?' }).getByRole('button', { name: 'Allow once' }).click();
    await expect.poll(() => card.locator('.tool-status').textContent()).toBe('done');
    expect(readFileSync(join(workspace, 'note.md'), 'utf8')).toBe('one\ntwo\nthree\n');
    expect(await card.locator('.tool-summary').textContent()).toBe('note.md');
    // A list, not escaped JSON; the contents are in the diff, not repeated in the arguments.
    expect(await card.locator('dl.tool-args dt').allTextContents()).toEqual(['path']);
    expect(await card.locator('dl.tool-args dd').allTextContents()).toEqual(['note.md']);
    expect(await card.textContent()).not.toContain('"contents"');
    const added = card.locator('table.diff tr.diff-add');
    expect(await added.locator('.diff-number').allTextContents()).toEqual(['1', '2', '3']);
    expect(await added.locator('.diff-text').allTextContents()).toEqual(['one', 'two', 'three']);
    // The bookkeeping line is part of the card, not a line of the transcript.
    expect(await card.locator('.tool-approval').textContent()).toBe('Allowed once by you');
    expect(await page.locator('#transcript > .notice').allTextContents()).toEqual([]);
  });

  it('issue 19: an edit shows a coloured diff numbered from the file, and a denial is folded into its card', async () => {
    const workspace = tempDir('crystal-ws-');
    writeFileSync(join(workspace, 'list.txt'), `${Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n')}\n`);
    const { page } = await setup({
      workspace,
      args: ['--approval', 'edit'],
      replies: [
        {
          toolCalls: [
            { id: 'call_1', name: 'edit', arguments: { path: 'list.txt', old_string: 'line 7', new_string: 'line seven' } },
          ],
        },
        { toolCalls: [{ id: 'call_2', name: 'bash', arguments: { command: 'rm -rf build\necho gone' } }] },
        { text: 'Done.' },
      ],
    });
    await send(page, 'Edit and clean.');
    const edit = page.getByRole('article', { name: 'Tool call edit' });
    await expect.poll(() => edit.locator('.tool-diff').getAttribute('data-preview')).toBe('false');
    expect(await edit.locator('tr.diff-del .diff-number').allTextContents()).toEqual(['7']);
    expect(await edit.locator('tr.diff-add .diff-number').allTextContents()).toEqual(['7']);
    expect(await edit.locator('tr.diff-add .diff-text').allTextContents()).toEqual(['line seven']);
    expect((await edit.locator('tr.diff-ctx .diff-number').allTextContents()).map(Number)).toEqual(
      expect.arrayContaining([6, 8]),
    );
    const colour = (selector: string) =>
      edit
        .locator(selector)
        .first()
        .evaluate((n) => getComputedStyle(n).backgroundColor);
    expect(await colour('tr.diff-add')).not.toBe(await colour('tr.diff-del'));
    expect(await colour('tr.diff-add')).not.toBe(await colour('tr.diff-ctx'));
    expect(await edit.locator('.tool-approval').textContent()).toBe('Approved by Policy');

    // bash asks in edit mode: deny it; the card says so and the bookkeeping stays inside it.
    const bash = page.getByRole('article', { name: 'Tool call bash' });
    await page.getByRole('alertdialog', { name: 'Approve bash?' }).getByRole('button', { name: 'Deny', exact: true }).click();
    await expect.poll(() => bash.locator('.tool-status').textContent()).toBe('denied');
    expect(await bash.locator('.tool-summary').textContent()).toBe('rm -rf build');
    expect(await bash.locator('dl.tool-args dd pre').textContent()).toBe('rm -rf build\necho gone');
    expect(await bash.locator('.tool-approval').textContent()).toBe('Denied by you');
    await expect.poll(() => page.locator('article.assistant').last().textContent()).toContain('Done.');
    const notices = await page.locator('#transcript > .notice').allTextContents();
    expect(notices.filter((n) => /Approval \d|Approved by/.test(n))).toEqual([]);
  });

  it('issue 19: long tool output is collapsed behind an expander', async () => {
    const workspace = tempDir('crystal-ws-');
    writeFileSync(join(workspace, 'long.txt'), `${Array.from({ length: 60 }, (_, i) => `row ${i + 1}`).join('\n')}\n`);
    const { page } = await setup({
      workspace,
      replies: [{ toolCalls: [{ id: 'call_1', name: 'read', arguments: { path: 'long.txt' } }] }, { text: 'Read it.' }],
    });
    await send(page, 'Read it.');
    const card = page.getByRole('article', { name: 'Tool call read' });
    await expect.poll(() => card.locator('.tool-status').textContent()).toBe('done');
    const output = card.locator('pre.tool-output');
    const expander = card.getByRole('button', { name: /^Show all \d+ lines/ });
    expect(await expander.getAttribute('aria-expanded')).toBe('false');
    expect((await output.textContent())?.split('\n')).toHaveLength(12);
    expect(await output.textContent()).not.toContain('row 60');
    await expander.click();
    expect(await output.textContent()).toContain('row 60');
    expect(await card.getByRole('button', { name: 'Show less' }).getAttribute('aria-expanded')).toBe('true');
  });
});
