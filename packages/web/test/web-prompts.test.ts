/**
 * Issue 19, item 1: every prompt the engine waits on is on screen, has the focus, and is
 * answered from the keyboard as in the terminal; a denial can carry feedback for the model;
 * after /quit or a stopped host the page says the session ended and how to resume it.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasFocusWithin, inViewport, pageHarness } from './page-harness.js';

const { setup } = pageHarness();

const longText = Array.from({ length: 120 }, (_, i) => `Line ${i + 1} of a long answer.`).join('\n\n');

describe('issue 19: prompts in the page', () => {
  it('WEBX-1 issue 19: an approval waiting under a long transcript is in the viewport, has the focus, and y allows it', async () => {
    const { page, workspace } = await setup({
      replies: [
        { text: longText, toolCalls: [{ id: 'call_1', name: 'write', arguments: { path: 'a.txt', contents: 'A' } }] },
        { text: 'Wrote a.txt.' },
      ],
    });
    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill('Write a.');
    await box.press('Enter');
    const card = page.getByRole('alertdialog', { name: 'Approve write?' });
    await expect.poll(() => card.count()).toBe(1);
    expect(await page.evaluate(() => document.documentElement.scrollHeight > innerHeight * 2)).toBe(true);
    await expect.poll(() => inViewport(page, '.approval')).toBe(true);
    await expect.poll(() => hasFocusWithin(page, '.approval')).toBe(true);
    await page.keyboard.press('y');
    await expect.poll(() => page.locator('article.assistant').last().textContent()).toContain('Wrote a.txt.');
    expect(existsSync(join(workspace, 'a.txt'))).toBe(true);
    // Answered: the card is gone and the focus is back in the composer.
    expect(await card.count()).toBe(0);
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('text');
  });

  it('WEBX-1 issue 19: f denies with feedback, and the model reads the feedback in the tool result', async () => {
    const { page, fake, workspace } = await setup({
      replies: [
        { toolCalls: [{ id: 'call_1', name: 'write', arguments: { path: 'b.txt', contents: 'B' } }] },
        { text: 'Understood.' },
      ],
    });
    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill('Write b.');
    await box.press('Enter');
    await expect.poll(() => hasFocusWithin(page, '.approval')).toBe(true);
    await page.keyboard.press('f');
    const feedback = page.getByRole('textbox', { name: 'Feedback for the model' });
    await expect.poll(() => feedback.evaluate((n) => n === document.activeElement)).toBe(true);
    // Keys typed into the feedback are text, not answers.
    await feedback.pressSequentially('no, name it notes.txt');
    await feedback.press('Enter');
    await expect.poll(() => page.locator('article.assistant').last().textContent()).toContain('Understood.');
    expect(existsSync(join(workspace, 'b.txt'))).toBe(false);
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[1]?.rawBody).toContain('no, name it notes.txt');
  });

  it('WEBX-1 issue 19: Escape on the approval card denies it', async () => {
    const { page, fake, workspace } = await setup({
      replies: [{ toolCalls: [{ id: 'call_1', name: 'write', arguments: { path: 'c.txt', contents: 'C' } }] }, { text: 'ok' }],
    });
    await page.getByRole('textbox', { name: 'Message' }).fill('Write c.');
    await page.getByRole('textbox', { name: 'Message' }).press('Enter');
    await expect.poll(() => hasFocusWithin(page, '.approval')).toBe(true);
    await page.keyboard.press('Escape');
    await expect.poll(() => fake.requests.length).toBe(2);
    expect(existsSync(join(workspace, 'c.txt'))).toBe(false);
  });

  it('WEBX-1 issue 19: a question under a long transcript is in the viewport, has the focus, and arrows plus Enter answer it', async () => {
    const { page, fake } = await setup({
      replies: [
        {
          text: longText,
          toolCalls: [
            {
              id: 'call_q',
              name: 'question',
              arguments: {
                questions: [
                  {
                    header: 'Database',
                    question: 'Which database?',
                    options: [{ label: 'Postgres' }, { label: 'SQLite', description: 'a file' }],
                  },
                ],
              },
            },
          ],
        },
        { text: 'SQLite it is.' },
      ],
    });
    await page.getByRole('textbox', { name: 'Message' }).fill('Pick a database.');
    await page.getByRole('textbox', { name: 'Message' }).press('Enter');
    const form = page.getByRole('form', { name: 'Question from the assistant' });
    await expect.poll(() => form.count()).toBe(1);
    await expect.poll(() => inViewport(page, '.question')).toBe(true);
    await expect.poll(() => hasFocusWithin(page, '.question')).toBe(true);
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('article.assistant').last().textContent()).toContain('SQLite it is.');
    // The tool result, JSON inside the request's JSON.
    expect(fake.requests[1]?.rawBody).toContain('User answers: {\\"answers\\":[[\\"SQLite\\"]]}');
  });

  it('issue 19: after /quit the page says the session ended, offers the resume command and stops reconnecting', async () => {
    const { page, web } = await setup({ replies: [{ text: 'an answer' }] });
    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill('hello');
    await box.press('Enter');
    await expect.poll(() => page.locator('article.assistant').textContent()).toContain('an answer');
    const id = (await page.locator('#session').getAttribute('data-scope')) as string;
    await box.fill('/quit');
    await box.press('Enter');
    const ended = page.getByRole('alert', { name: 'Session ended' });
    await expect.poll(() => ended.textContent()).toContain(`crystal web --resume ${id}`);
    expect(await ended.textContent()).toContain(`crystal --resume ${id}`);
    expect(await page.locator('#activity').textContent()).toBe('Session ended');
    expect(await box.isDisabled()).toBe(true);
    // /quit stops the host by itself.
    await expect.poll(() => web.child.exitCode).toBe(0);
    expect(await page.locator('#activity').textContent()).toBe('Session ended');
  });

  it('issue 19: when the host is stopped (Ctrl+C) the page says the session ended, not "Reconnecting…"', async () => {
    const { page, web } = await setup({ replies: [{ text: 'an answer' }] });
    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill('hello');
    await box.press('Enter');
    await expect.poll(() => page.locator('article.assistant').textContent()).toContain('an answer');
    const id = (await page.locator('#session').getAttribute('data-scope')) as string;
    expect(await web.stop()).toBe(0);
    const ended = page.getByRole('alert', { name: 'Session ended' });
    await expect.poll(() => ended.textContent()).toContain(`crystal web --resume ${id}`);
    // The host said goodbye: the page did not have to guess from failed reconnections.
    expect(await ended.locator('h2').textContent()).toBe('The session ended; the host has stopped.');
    expect(await page.locator('#activity').textContent()).toBe('Session ended');
  });

  it('issue 19: a host killed without a word (SIGKILL) is reported as not answering, with the resume command', async () => {
    const { page, web } = await setup({ replies: [{ text: 'an answer' }] });
    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill('hello');
    await box.press('Enter');
    await expect.poll(() => page.locator('article.assistant').textContent()).toContain('an answer');
    const id = (await page.locator('#session').getAttribute('data-scope')) as string;
    web.child.kill('SIGKILL');
    const ended = page.getByRole('alert', { name: 'Session ended' });
    await expect.poll(() => ended.textContent(), { timeout: 20_000 }).toContain('not answering');
    expect(await ended.textContent()).toContain(`crystal web --resume ${id}`);
  });

  it('issue 19: an empty session that ends says nothing was saved', async () => {
    const { page, web } = await setup({ replies: [{ text: 'unused' }] });
    expect(await web.stop()).toBe(0);
    const ended = page.getByRole('alert', { name: 'Session ended' });
    await expect.poll(() => ended.textContent()).toContain('nothing was saved');
  });
});
