/**
 * AGENT-4 on the page: the real `crystal web` binary, headless Chromium and the fake provider.
 * A child shows as a labelled, collapsible card; its approval names it; its text stays in it.
 */
import { FakeProvider, tempDir, tempHome } from '@crystal/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { imageConfig, launchChromium, startCrystalWeb } from './support.js';

let browser: Awaited<ReturnType<typeof launchChromium>>;
const cleanups: (() => Promise<void> | void)[] = [];
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('AGENT-4 child agents in the Web page', () => {
  it('AGENT-4 a labelled, collapsible child card with its steps; its approval names it; its answer stays in the card; a reload rebuilds it from the saved transcript', async () => {
    const fake = await FakeProvider.start({
      replies: [
        { toolCalls: [{ id: 't1', name: 'task', arguments: { description: 'note it', prompt: 'Write note.md.' } }] },
        { toolCalls: [{ id: 'c1', name: 'write', arguments: { path: 'note.md', contents: 'hi\n' } }] },
        { text: 'CHILD ANSWER: wrote it.' },
        { text: 'Parent wraps up.' },
      ],
      whenExhausted: 'error',
    });
    cleanups.push(() => fake.close());
    const home = tempHome();
    cleanups.push(() => home.dispose());
    home.writeConfig(imageConfig(fake, 'openai'));
    const web = await startCrystalWeb({ home: home.path, workspace: tempDir('crystal-ws-'), args: [] });
    cleanups.push(() => web.stop());
    const page = await browser.context.newPage();
    cleanups.push(() => page.close());
    await page.goto(web.url);
    await expect.poll(() => page.locator('#activity').textContent()).toBe('Ready');
    await page.getByRole('textbox', { name: 'Message' }).fill('delegate');
    await page.getByRole('button', { name: 'Send' }).click();

    const approval = page.getByRole('alertdialog', { name: 'Approve write?' });
    await expect.poll(() => approval.count()).toBe(1);
    expect(await approval.textContent()).toContain('Asked by main/general#1');
    const card = page.locator('details.agent-card[data-agent="main/general#1"]');
    expect(await card.locator('summary').textContent()).toContain('main/general#1 note it');
    expect(await card.locator('.agent-progress').textContent()).toMatch(/Running tools · 1 model call · 1 tool call/);
    await approval.getByRole('button', { name: 'Allow once' }).click();

    await expect.poll(() => page.locator('#activity').textContent()).toBe('Ready');
    expect(await card.locator('.agent-progress').textContent()).toBe('Done · 2 model calls · 1 tool call');
    expect(await card.locator('.agent-steps li.done').textContent()).toContain('write');
    // Finished, the card folds; a click on its label opens it with the answer.
    expect(await card.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(false);
    await card.locator('summary').click();
    expect(await card.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(true);
    expect(await card.locator('.agent-answer').textContent()).toBe('CHILD ANSWER: wrote it.');
    // The child's text is not the parent's: the main answer blocks hold only the parent's text.
    const mainText = await page.locator('article.assistant').allTextContents();
    expect(mainText.join('')).not.toContain('CHILD ANSWER');
    expect(mainText.join('')).toContain('Parent wraps up.');

    // A reload rebuilds the card from the child's saved transcript, right after the task call's card.
    await page.reload();
    await expect.poll(() => page.locator('#activity').textContent()).toBe('Ready');
    const again = page.locator('details.agent-card[data-agent="main/general#1"]');
    await expect.poll(() => again.count()).toBe(1);
    expect(await again.locator('summary').textContent()).toContain('main/general#1 note it');
    expect(await again.locator('.agent-progress').textContent()).toBe('Done · 2 model calls · 1 tool call');
    expect(await again.locator('.agent-steps li.done').textContent()).toBe('write note.md');
    expect(await again.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(false);
    expect(await again.evaluate((d) => d.previousElementSibling?.textContent ?? '')).toContain('task');
    await again.locator('summary').click();
    expect(await again.locator('.agent-answer').textContent()).toBe('CHILD ANSWER: wrote it.');
    expect((await page.locator('article.assistant').allTextContents()).join('')).not.toContain('CHILD ANSWER');
  });
});
