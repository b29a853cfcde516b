/**
 * One real `crystal web` per test, with the fake provider and a page of a shared headless
 * Chromium (the harness of web-page.test.ts, shared by the issue 19 suites).
 */
import { FakeProvider, type FakeReply, type TempHome, tempDir, tempHome } from '@crystal/testkit';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect, vi } from 'vitest';
import { imageConfig, launchChromium, startCrystalWeb, type WebProcess } from './support.js';

export interface Setup {
  readonly fake: FakeProvider;
  readonly home: TempHome;
  readonly workspace: string;
  readonly web: WebProcess;
  readonly page: Page;
}

export interface SetupOptions {
  readonly replies: FakeReply[];
  readonly protocol?: 'openai' | 'anthropic';
  readonly config?: Record<string, unknown>;
  readonly args?: readonly string[];
  readonly home?: TempHome;
  readonly workspace?: string;
  readonly viewport?: { width: number; height: number };
  readonly beforeOpen?: (page: Page) => Promise<void>;
  /** Changes the written config (a second model, say). */
  readonly editConfig?: (config: { providers: { fake: { models: Record<string, Record<string, unknown>> } } }) => void;
}

/** Registers the hooks of one test file and returns its `setup`. */
export function pageHarness(): {
  setup: (options: SetupOptions) => Promise<Setup>;
  cleanups: (() => Promise<void> | void)[];
  context: () => BrowserContext;
} {
  let browser: Awaited<ReturnType<typeof launchChromium>> | undefined;
  const cleanups: (() => Promise<void> | void)[] = [];
  // A page on a loaded 2-core machine can take more than expect.poll's default second to show a change.
  vi.setConfig({ expect: { poll: { timeout: 10_000 } } });
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const context = (): BrowserContext => {
    if (!browser) throw new Error('The browser is not started.');
    return browser.context;
  };
  const setup = async (options: SetupOptions): Promise<Setup> => {
    const protocol = options.protocol ?? 'openai';
    const fake = await FakeProvider.start({ wire: protocol, replies: options.replies });
    cleanups.push(() => fake.close());
    const home = options.home ?? tempHome();
    if (!options.home) cleanups.push(() => home.dispose());
    const config = imageConfig(fake, protocol, options.config ?? {});
    options.editConfig?.(config);
    home.writeConfig(config);
    const workspace = options.workspace ?? tempDir('crystal-ws-');
    const web = await startCrystalWeb({ home: home.path, workspace, args: options.args ?? [] });
    cleanups.push(async () => {
      await web.stop();
    });
    const page = await context().newPage();
    cleanups.push(() => page.close());
    if (options.viewport) await page.setViewportSize(options.viewport);
    if (options.beforeOpen) await options.beforeOpen(page);
    await page.goto(web.url);
    await expect.poll(() => page.locator('#activity').textContent()).toBe('Ready');
    return { fake, home, workspace, web, page };
  };
  return { setup, cleanups, context };
}

/** Whether the element's box lies wholly inside the viewport. */
export async function inViewport(page: Page, selector: string): Promise<boolean> {
  return page.locator(selector).evaluate((node) => {
    const r = node.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth;
  });
}

/** Whether the focused element is inside the element. */
export async function hasFocusWithin(page: Page, selector: string): Promise<boolean> {
  return page.locator(selector).evaluate((node) => node.contains(document.activeElement));
}
