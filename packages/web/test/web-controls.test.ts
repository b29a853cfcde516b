/**
 * Issue 19, item 4: the terminal's controls in the page: Plan/Work, approval mode, model picker,
 * the session browser (resume, fork, export), the queue with edit and remove, the retry
 * countdown, the context meter, `/btw` in its own panel and the page's own `/help`.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '@crystal/testkit';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { pageHarness } from './page-harness.js';

const { setup } = pageHarness();

const send = async (page: Page, text: string) => {
  await page.getByRole('textbox', { name: 'Message' }).fill(text);
  await page.getByRole('textbox', { name: 'Message' }).press('Enter');
};

const controls = (page: Page) =>
  page.evaluate(async () => (await fetch('/api/controls')).json()) as Promise<{
    mode: string;
    approvalMode: string;
    provider: string;
    model: string;
    scope: string;
  }>;

describe('issue 19: controls in the page', () => {
  it('issue 19: the Plan/Work toggle switches the engine, by click and by Alt+P', async () => {
    const { page } = await setup({ replies: [{ text: 'ok' }] });
    const toggle = page.getByRole('button', { name: /Work mode/ });
    expect(await toggle.getAttribute('aria-pressed')).toBe('false');
    await toggle.click();
    await expect.poll(async () => (await controls(page)).mode).toBe('plan');
    await expect.poll(() => page.locator('#mode').getAttribute('aria-pressed')).toBe('true');
    expect(await page.locator('#mode').textContent()).toBe('Plan');
    await page.keyboard.press('Alt+p');
    await expect.poll(async () => (await controls(page)).mode).toBe('work');
    await expect.poll(() => page.locator('#mode').textContent()).toBe('Work');
  });

  it('issue 19: the approval mode picker changes what asks: in full mode a write runs without a card', async () => {
    const { page } = await setup({
      replies: [
        { toolCalls: [{ id: 'call_1', name: 'write', arguments: { path: 'x.txt', contents: 'x' } }] },
        { text: 'Wrote it.' },
      ],
    });
    await page.getByRole('combobox', { name: 'Approval mode' }).selectOption('full');
    await expect.poll(async () => (await controls(page)).approvalMode).toBe('full');
    await send(page, 'Write x.');
    await expect.poll(() => page.locator('article.assistant').last().textContent()).toContain('Wrote it.');
    expect(await page.getByRole('alertdialog').count()).toBe(0);
    expect(await page.getByRole('article', { name: 'Tool call write' }).locator('.tool-approval').textContent()).toBe(
      'Approved by Policy',
    );
  });

  it('issue 19: the model picker switches the model the next request uses', async () => {
    const { page, fake } = await setup({
      replies: [{ text: 'from the second model' }],
      editConfig: (config) => {
        config.providers.fake.models['fake-large'] = { contextWindow: 64000, maxTokens: 4096 };
      },
    });
    const picker = page.getByRole('combobox', { name: 'Model' });
    expect(await picker.locator('option').allTextContents()).toEqual(
      expect.arrayContaining(['fake/fake-model', 'fake/fake-large']),
    );
    await picker.selectOption('fake fake-large');
    await expect.poll(async () => (await controls(page)).model).toBe('fake-large');
    await send(page, 'Hello.');
    await expect.poll(() => fake.requests.length).toBe(1);
    expect((fake.requests[0]?.body as { model?: string }).model).toBe('fake-large');
  });

  it('issue 19: the session browser resumes an earlier session, forks it, and exports this one', async () => {
    const { page } = await setup({ replies: [{ text: 'first answer' }] });
    await send(page, 'first question');
    await expect.poll(() => page.locator('article.assistant').textContent()).toContain('first answer');
    const first = (await controls(page)).scope;
    await send(page, '/clear');
    await expect.poll(async () => (await controls(page)).scope).not.toBe(first);
    await expect.poll(() => page.locator('#transcript').textContent()).not.toContain('first answer');

    await page.getByRole('button', { name: 'Sessions' }).click();
    const dialog = page.getByRole('dialog', { name: 'Sessions' });
    await expect.poll(() => dialog.isVisible()).toBe(true);
    await dialog.getByRole('button', { name: `Resume ${first}` }).click();
    await expect.poll(() => page.locator('#session').getAttribute('data-scope')).toBe(first);
    await expect.poll(() => page.locator('#transcript').textContent()).toContain('first answer');
    expect(await page.locator('#session').textContent()).toBe(`…${first.slice(-6)}`);

    await page.getByRole('button', { name: 'Sessions' }).click();
    await dialog.getByRole('button', { name: `Fork ${first}` }).click();
    await expect.poll(async () => (await controls(page)).scope).not.toBe(first);
    await expect.poll(() => page.locator('#transcript').textContent()).toContain('first answer');

    await page.getByRole('button', { name: 'Sessions' }).click();
    await dialog.getByRole('button', { name: 'Export this session as Markdown' }).click();
    const output = page.locator('section.command').last();
    await expect.poll(() => output.textContent()).toMatch(/Exported to \S+\.md/);
    const path = /Exported to (\S+\.md)/.exec((await output.textContent()) ?? '')?.[1] as string;
    expect(existsSync(path)).toBe(true);
    expect(readFileSync(path, 'utf8')).toContain('first question');
  });

  it('issue 19: queued messages can be edited and removed before they go', async () => {
    const { page, fake } = await setup({ replies: [{ textTokens: 400, delayMs: 25 }, { text: 'next answer' }] });
    await send(page, 'Long answer please.');
    await expect.poll(() => page.locator('article.assistant').count()).toBe(1);
    await send(page, 'drop this one');
    await send(page, 'keep this one');
    const queue = page.getByRole('region', { name: 'Queued messages' });
    await expect.poll(() => queue.getByRole('listitem').count()).toBe(2);
    await queue.getByRole('button', { name: 'Remove queued: drop this one' }).click();
    await expect.poll(() => queue.getByRole('listitem').count()).toBe(1);
    await queue.getByRole('button', { name: 'Edit queued: keep this one' }).click();
    const field = queue.getByRole('textbox', { name: 'Queued message text' });
    await field.fill('an edited follow-up');
    await field.press('Enter');
    await expect.poll(() => queue.textContent()).toContain('an edited follow-up');
    await page.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => page.locator('article.assistant').last().textContent()).toContain('next answer');
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[1]?.rawBody).toContain('an edited follow-up');
    expect(fake.requests[1]?.rawBody).not.toContain('drop this one');
    expect(fake.requests[1]?.rawBody).not.toContain('keep this one');
  });

  it('issue 19: a retry shows a countdown in the progress row, which goes once the answer streams', async () => {
    const { page } = await setup({
      replies: [{ error: { status: 429, headers: { 'retry-after': '2' }, message: 'slow down' } }, { text: 'after the retry' }],
    });
    await send(page, 'Hello.');
    const row = page.locator('#progress');
    await expect.poll(() => row.textContent()).toMatch(/^Retrying in [12] s \(attempt 1\)/);
    await expect
      .poll(() => page.locator('article.assistant').last().textContent(), { timeout: 15_000 })
      .toContain('after the retry');
    await expect.poll(() => row.isHidden()).toBe(true);
    // The countdown is the row's, not a line of the transcript.
    expect(await page.locator('#transcript').textContent()).not.toContain('Retrying');
  });

  it('issue 19: the context meter shows the last round against the window', async () => {
    const { page } = await setup({ replies: [{ text: 'big context', usage: { input: 60_000, output: 4_000 } }] });
    await send(page, 'Hello.');
    await expect.poll(() => page.locator('#context-text').textContent()).toBe('50%');
    expect(await page.getByRole('meter', { name: 'Context used: 50%' }).count()).toBe(1);
  });

  it('issue 19: /btw answers in its own panel, not in the transcript', async () => {
    const { page } = await setup({ replies: [{ text: 'The side answer.' }] });
    await send(page, '/btw what is a monad?');
    const panel = page.getByRole('complementary', { name: 'Side question' });
    await expect.poll(() => panel.textContent()).toContain('The side answer.');
    expect(await panel.textContent()).toContain('what is a monad?');
    expect(await page.locator('#transcript').textContent()).not.toContain('The side answer.');
    await panel.getByRole('button', { name: 'Close the side panel' }).click();
    expect(await panel.isHidden()).toBe(true);
  });

  it("issue 19: /help shows the page's own keys and the commands, not the terminal's keys", async () => {
    const { page, fake } = await setup({ replies: [{ text: 'unused' }] });
    await send(page, '/help');
    const help = page.getByRole('region', { name: 'Help' });
    await expect.poll(() => help.count()).toBe(1);
    const text = (await help.textContent()) ?? '';
    for (const key of ['Alt+P', 'Shift+Enter', 'deny with feedback', '/resume [id]', '/btw <question>'])
      expect(text).toContain(key);
    for (const terminalOnly of ['Ctrl+O', 'Ctrl+V', 'Shift+Tab']) expect(text).not.toContain(terminalOnly);
    expect(fake.requests).toHaveLength(0);
    expect(await page.getByRole('textbox', { name: 'Message' }).inputValue()).toBe('');
  });
});

describe('issue 19: MCP changes in the page', () => {
  it('issue 19: an mcp-changed event is shown (an MCP server that stops)', async () => {
    const dir = tempDir('crystal-mcp-stop-');
    // A server that never answers, and exits once the test drops a file next to it.
    writeFileSync(
      join(dir, 'server.js'),
      `const fs = require('node:fs'); setInterval(() => { if (fs.existsSync(${JSON.stringify(join(dir, 'stop'))})) process.exit(1); }, 50);`,
    );
    const { page } = await setup({
      replies: [{ text: 'unused' }],
      config: { mcpServers: { flaky: { command: process.execPath, args: [join(dir, 'server.js')] } } },
    });
    writeFileSync(join(dir, 'stop'), '');
    await expect
      .poll(() => page.locator('#transcript .notice').allTextContents())
      .toContainEqual(expect.stringContaining('MCP server flaky changed'));
  });
});
