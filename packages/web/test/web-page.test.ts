/**
 * The Web surface in a real browser (WEBX-4): headless Debian Chromium through playwright-core
 * drives the page that the real `crystal web` binary serves, against the fake provider. Each
 * test has its own Home, workspace, host and browser profile.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { FakeProvider, type FakeReply, type TempHome, runCrystal, tempDir, tempHome } from '@crystal/testkit';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  imageConfig,
  launchChromium,
  mediaFiles,
  noisePng,
  png,
  requestImageWidths,
  startCrystalWeb,
  type WebProcess,
} from './support.js';

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

interface Setup {
  readonly fake: FakeProvider;
  readonly home: TempHome;
  readonly workspace: string;
  readonly web: WebProcess;
  readonly page: Page;
}

async function setup(options: {
  replies: FakeReply[];
  protocol?: 'openai' | 'anthropic';
  config?: Record<string, unknown>;
  args?: readonly string[];
  home?: TempHome;
  workspace?: string;
  beforeOpen?: (context: BrowserContext) => Promise<void>;
}): Promise<Setup> {
  const protocol = options.protocol ?? 'openai';
  const fake = await FakeProvider.start({ wire: protocol, replies: options.replies });
  cleanups.push(() => fake.close());
  const home = options.home ?? tempHome();
  if (!options.home) cleanups.push(() => home.dispose());
  home.writeConfig(imageConfig(fake, protocol, options.config ?? {}));
  const workspace = options.workspace ?? tempDir('crystal-ws-');
  const web = await startCrystalWeb({ home: home.path, workspace, args: options.args ?? [] });
  cleanups.push(async () => {
    await web.stop();
  });
  const page = await browser.context.newPage();
  cleanups.push(() => page.close());
  await page.goto(web.url);
  await expect.poll(() => page.locator('#activity').textContent()).toBe('Ready');
  return { fake, home, workspace, web, page };
}

const files = async (names: readonly [string, number][]) =>
  Promise.all(
    names.map(async ([name, width], i) => ({
      name,
      mimeType: 'image/png',
      buffer: await png(width, 30, [40 * i, 90, 200 - 40 * i]),
    })),
  );

describe('crystal web in Chromium', () => {
  for (const protocol of ['openai', 'anthropic'] as const) {
    it(`WEB-1 WEB-3 WEB-8 WEB-10 WEBX-2 WEBX-4: three images attached and reordered reach the provider in the chosen order (${protocol})`, async () => {
      const { page, fake, home } = await setup({ replies: [{ text: 'I see **three** images.' }], protocol });
      await page.locator('#picker').setInputFiles(
        await files([
          ['a.png', 40],
          ['b.png', 50],
          ['c.png', 60],
        ]),
      );
      const tray = page.getByRole('list', { name: 'Images to send' });
      await expect.poll(() => tray.getByRole('listitem').count()).toBe(3);
      // Chosen order: c, a, b.
      await page.getByRole('button', { name: 'Move c.png earlier' }).click();
      await page.getByRole('button', { name: 'Move c.png earlier' }).click();
      await expect
        .poll(() => tray.getByRole('listitem').evaluateAll((items) => items.map((i) => i.getAttribute('aria-label'))))
        .toEqual(['Image 1 of 3: c.png', 'Image 2 of 3: a.png', 'Image 3 of 3: b.png']);
      await expect.poll(() => tray.getByRole('img', { name: 'a.png' }).count()).toBe(1);
      await page.getByRole('textbox', { name: 'Message' }).fill('Compare these.');
      await page.getByRole('button', { name: 'Send' }).click();

      await expect.poll(() => page.locator('article.assistant strong').textContent()).toBe('three');
      expect(fake.requests).toHaveLength(1);
      expect(await requestImageWidths(fake.requests[0]?.body)).toEqual([60, 40, 50]);
      expect(fake.requests[0]?.rawBody).toContain('Compare these.');
      expect(mediaFiles(home.path)).toHaveLength(3);
      // WEB-8: the display name is the accessible text of the sent images.
      const sent = page.locator('article.user');
      for (const name of ['c.png', 'a.png', 'b.png']) await expect.poll(() => sent.getByRole('img', { name }).count()).toBe(1);
      await expect.poll(() => page.getByRole('list', { name: 'Images to send' }).isHidden()).toBe(true);
    });
  }

  it('WEB-3 WEBX-2: a batch whose third image is truncated stores nothing and the page names image 3', async () => {
    const { page, fake, home } = await setup({ replies: [{ text: 'unused' }] });
    const [a, b, c] = await files([
      ['a.png', 40],
      ['b.png', 50],
      ['c.png', 300],
    ]);
    const truncated = { ...c!, buffer: c!.buffer.subarray(0, Math.floor(c!.buffer.length * 0.6)) };
    const before = mediaFiles(home.path);
    await page.locator('#picker').setInputFiles([a!, b!, truncated]);
    await page.getByRole('textbox', { name: 'Message' }).fill('Three images.');
    await page.getByRole('button', { name: 'Send' }).click();

    const alert = page.locator('#alerts');
    await expect.poll(() => alert.textContent()).toMatch(/^Image 3 \(c\.png\): /);
    const third = page.getByRole('listitem', { name: 'Image 3 of 3: c.png' });
    expect(await third.getAttribute('aria-invalid')).toBe('true');
    expect(mediaFiles(home.path)).toEqual(before);
    expect(fake.requests).toHaveLength(0);
    // The batch stays in the tray; removing the bad member lets the rest go.
    await page.getByRole('button', { name: 'Remove c.png' }).click();
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => fake.requests.length).toBe(1);
    expect(await requestImageWidths(fake.requests[0]?.body)).toEqual([40, 50]);
    expect(mediaFiles(home.path)).toHaveLength(2);
  });

  it('WEB-2: an unsupported declared type is refused before a preview is allocated', async () => {
    const { page } = await setup({ replies: [{ text: 'unused' }] });
    await page.evaluate(() => {
      const created: string[] = [];
      (window as unknown as { created: string[] }).created = created;
      const original = URL.createObjectURL.bind(URL);
      URL.createObjectURL = (object: Blob | MediaSource) => {
        created.push(object instanceof File ? object.name : 'blob');
        return original(object);
      };
    });
    const [ok] = await files([['ok.png', 40]]);
    await page
      .locator('#picker')
      .setInputFiles([
        ok!,
        { name: 'scan.bmp', mimeType: 'image/bmp', buffer: Buffer.from('BM not really') },
        { name: 'logo.svg', mimeType: 'image/svg+xml', buffer: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>') },
      ]);
    const alert = page.locator('#alerts');
    await expect.poll(() => alert.textContent()).toContain('scan.bmp: the type image/bmp is not supported');
    expect(await alert.textContent()).toContain('logo.svg: the type image/svg+xml is not supported');
    expect(await page.evaluate(() => (window as unknown as { created: string[] }).created)).toEqual(['ok.png']);
    expect(await page.getByRole('list', { name: 'Images to send' }).getByRole('listitem').count()).toBe(1);
  });

  it('WEB-1 WEBX-2: images come in by paste and drag and drop too, and can be removed', async () => {
    const { page, fake } = await setup({ replies: [{ text: 'ok' }] });
    const [p1, d1, d2] = await files([
      ['image.png', 41],
      ['dropped-1.png', 42],
      ['dropped-2.png', 43],
    ]);
    const toFile = (f: { name: string; mimeType: string; buffer: Buffer }) => ({
      name: f.name,
      type: f.mimeType,
      data: [...f.buffer],
    });
    // Paste: a clipboard image arrives as a File named image.png; the page names it.
    await page.getByRole('textbox', { name: 'Message' }).focus();
    await page.evaluate((file) => {
      const transfer = new DataTransfer();
      transfer.items.add(new File([new Uint8Array(file.data)], file.name, { type: file.type }));
      document.activeElement?.dispatchEvent(new ClipboardEvent('paste', { clipboardData: transfer, bubbles: true }));
    }, toFile(p1!));
    // Drag and drop onto the composer.
    const transfer = await page.evaluateHandle(
      (list) => {
        const t = new DataTransfer();
        for (const f of list) t.items.add(new File([new Uint8Array(f.data)], f.name, { type: f.type }));
        return t;
      },
      [toFile(d1!), toFile(d2!)],
    );
    await page.locator('#composer').dispatchEvent('dragover', { dataTransfer: transfer });
    await page.locator('#composer').dispatchEvent('drop', { dataTransfer: transfer });
    const tray = page.getByRole('list', { name: 'Images to send' });
    await expect
      .poll(() => tray.getByRole('listitem').evaluateAll((items) => items.map((i) => i.getAttribute('aria-label'))))
      .toEqual(['Image 1 of 3: Pasted image 1.png', 'Image 2 of 3: dropped-1.png', 'Image 3 of 3: dropped-2.png']);
    await page.getByRole('button', { name: 'Remove dropped-1.png' }).click();
    await page.getByRole('textbox', { name: 'Message' }).press('Enter');
    await expect.poll(() => fake.requests.length).toBe(1);
    expect(await requestImageWidths(fake.requests[0]?.body)).toEqual([41, 43]);
  });

  it('WEB-4 WEB-1: the page refuses an image that would pass the aggregate limit, naming it', async () => {
    const { page } = await setup({ replies: [{ text: 'unused' }], config: { images: { maxBatchBytes: 20_000 } } });
    const [small] = await files([['small.png', 40]]);
    const big = { name: 'big.png', mimeType: 'image/png', buffer: await noisePng(30_000) };
    await page.locator('#picker').setInputFiles([small!, big]);
    await expect
      .poll(() => page.locator('#alerts').textContent())
      .toMatch(/^big\.png: the images of one message may total at most/);
    expect(await page.getByRole('list', { name: 'Images to send' }).getByRole('listitem').count()).toBe(1);
  });

  it('WEBX-1: the turn streams live as safe Markdown, with a tool card and an approval answered in the page', async () => {
    const { page, workspace } = await setup({
      replies: [
        {
          reasoning: 'Plan the note.',
          toolCalls: [{ id: 'call_1', name: 'write', arguments: { path: 'note.md', contents: 'hello' } }],
        },
        { text: '# Done\n\nWrote `note.md` <img src=x onerror="window.pwned=1"> [site](javascript:alert(1))' },
      ],
    });
    await page.getByRole('textbox', { name: 'Message' }).fill('Write a note.');
    await page.getByRole('textbox', { name: 'Message' }).press('Enter');

    const approval = page.getByRole('alertdialog', { name: 'Approve write?' });
    await expect.poll(() => approval.count()).toBe(1);
    expect(await approval.textContent()).toContain('note.md');
    expect(await page.locator('details.reasoning').first().textContent()).toContain('Plan the note.');
    await approval.getByRole('button', { name: 'Allow once' }).click();

    await expect.poll(() => page.locator('article.assistant h1').textContent()).toBe('Done');
    const card = page.getByRole('article', { name: 'Tool call write' });
    await expect.poll(() => card.locator('.tool-status').textContent()).toBe('done');
    expect(readFileSync(join(workspace, 'note.md'), 'utf8')).toBe('hello');
    expect(await approval.count()).toBe(0);
    const answer = page.locator('article.assistant').last();
    expect(await answer.locator('code').textContent()).toBe('note.md');
    expect(await answer.locator('img').count()).toBe(0);
    expect(await answer.locator('a').count()).toBe(0);
    expect(await answer.textContent()).toContain('<img src=x onerror="window.pwned=1">');
    expect(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).toBeUndefined();
  });

  it('WEBX-1: the queue shows while a turn runs, and Cancel interrupts it', async () => {
    const { page, fake } = await setup({ replies: [{ textTokens: 400, delayMs: 25 }, { text: 'second answer' }] });
    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill('Long answer please.');
    await box.press('Enter');
    await expect.poll(() => page.locator('article.assistant').count()).toBe(1);
    await box.fill('And then this.');
    await box.press('Enter');
    const queue = page.getByRole('region', { name: 'Queued messages' });
    await expect.poll(() => queue.textContent()).toContain('And then this.');
    await page.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => page.locator('.notice').allTextContents()).toContain('Turn stopped (interrupted)');
    // QUEUE-12: the interrupt keeps the queued text, which goes next.
    await expect.poll(() => page.locator('article.assistant').last().textContent()).toContain('second answer');
    await expect.poll(() => page.locator('#activity').textContent()).toBe('Ready');
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[1]?.rawBody).toContain('And then this.');
    expect(await queue.isHidden()).toBe(true);
  });

  it('WEBX-1: text typed while an image send is in flight is never lost: Enter sends it next, and unsent text stays in the box', async () => {
    const { page, fake } = await setup({ replies: [{ text: 'saw the image' }, { text: 'got the rest' }] });
    // Hold the image send in flight until the test has typed (a slow link or a large image).
    let release = (): void => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let arrived = (): void => {};
    const inFlight = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    let sends = 0;
    await page.route('**/api/send', async (route) => {
      sends++;
      if (sends === 1) {
        arrived();
        await held;
      }
      await route.continue();
    });
    await page.locator('#picker').setInputFiles(await files([['a.png', 40]]));
    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill('Look at this.');
    await box.press('Enter');
    await inFlight;
    // While the send runs: more text and Enter.
    await box.press('End');
    await box.pressSequentially(' Then this.');
    await box.press('Enter');
    release();
    await expect.poll(() => fake.requests.length).toBe(2);
    expect(fake.requests[0]?.rawBody).toContain('Look at this.');
    expect(fake.requests[1]?.rawBody).toContain('Then this.');
    expect(fake.requests[1]?.rawBody).not.toContain('Look at this. Then this.');
    await expect.poll(() => box.inputValue()).toBe('');

    // Typed during a send without Enter: it stays in the box after the send.
    let releaseSecond = (): void => {};
    const heldSecond = new Promise<void>((resolve) => {
      releaseSecond = resolve;
    });
    let arrivedSecond = (): void => {};
    const inFlightSecond = new Promise<void>((resolve) => {
      arrivedSecond = resolve;
    });
    await page.unroute('**/api/send');
    await page.route('**/api/send', async (route) => {
      arrivedSecond();
      await heldSecond;
      await route.continue();
    });
    await page.locator('#picker').setInputFiles(await files([['b.png', 50]]));
    await box.fill('Another one.');
    await box.press('Enter');
    await inFlightSecond;
    await box.press('End');
    await box.pressSequentially(' Still typing');
    releaseSecond();
    await expect.poll(() => box.inputValue()).toBe('Still typing');
    await expect.poll(() => page.getByRole('list', { name: 'Images to send' }).isHidden()).toBe(true);
  });

  it('WEBX-3 WEBX-4: in the browser, the page needs the token and another local site cannot drive the host', async () => {
    const { page, web, fake } = await setup({ replies: [{ text: 'should not happen' }] });
    const scope = (await page.locator('#session').getAttribute('data-scope')) as string;
    // Another server on 127.0.0.1 is the same site, so the SameSite cookie goes along; Origin gives it away.
    const evil = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><script>
        const manifest = new TextEncoder().encode(JSON.stringify({ scope: ${JSON.stringify(scope)}, input: { kind: 'message', text: 'pwned', images: [] } }));
        const head = new Uint8Array(8); head.set([67, 82, 66, 49]); new DataView(head.buffer).setUint32(4, manifest.length);
        fetch(${JSON.stringify(`${web.origin}/api/send`)}, { method: 'POST', mode: 'no-cors', credentials: 'include', body: new Blob([head, manifest]) })
          .finally(() => { document.title = 'sent'; });
      </script>`);
    });
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
    cleanups.push(
      () =>
        new Promise<void>((resolve) => {
          evil.close(() => resolve());
          evil.closeAllConnections();
        }),
    );
    const attacker = await browser.context.newPage();
    cleanups.push(() => attacker.close());
    // The request goes out with the cookie and is refused (a foreign Origin, and a content type
    // a no-cors request cannot set); the browser also hides the answer (Cross-Origin-Resource-Policy).
    const sent = attacker.waitForEvent('requestfailed', (r) => r.url().endsWith('/api/send'));
    await attacker.goto(`http://127.0.0.1:${(evil.address() as AddressInfo).port}/`);
    expect((await sent).failure()?.errorText).toContain('ERR_BLOCKED_BY_RESPONSE');
    await expect.poll(() => attacker.title()).toBe('sent');
    const state = await page.evaluate(async () => (await fetch('/api/state')).json());
    expect(state.history).toEqual([]);
    expect(fake.requests).toHaveLength(0);
    // Without the cookie, the page itself is refused.
    await browser.context.clearCookies();
    const tokenless = await browser.context.newPage();
    cleanups.push(() => tokenless.close());
    const bare = await tokenless.goto(`${web.origin}/`);
    expect(bare?.status()).toBe(401);
    expect(await tokenless.textContent('body')).toContain("Open the full URL that 'crystal web' printed");
  });

  it('WEBX-1: a session started on the Web resumes in the terminal and back', async () => {
    const home = tempHome();
    cleanups.push(() => home.dispose());
    const workspace = tempDir('crystal-ws-');
    const first = await setup({ replies: [{ text: 'first answer' }, { text: 'terminal answer' }], home, workspace });
    await first.page.getByRole('textbox', { name: 'Message' }).fill('first question');
    await first.page.getByRole('textbox', { name: 'Message' }).press('Enter');
    await expect.poll(() => first.page.locator('article.assistant').textContent()).toContain('first answer');
    const id = (await first.page.locator('#session').getAttribute('data-scope')) as string;
    expect(await first.web.stop()).toBe(0);
    expect(existsSync(join(home.path, 'sessions', `${id}.json`))).toBe(true);

    const run = await runCrystal(['run', '--resume', id, 'terminal question'], { home: home.path, cwd: workspace });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('terminal answer');
    expect(first.fake.requests[1]?.rawBody).toContain('first question');

    const again = await setup({ replies: [{ text: 'back on the web' }], home, workspace, args: ['--resume', id] });
    expect(await again.page.locator('#session').getAttribute('data-scope')).toBe(id);
    const shown = await again.page.locator('#transcript').textContent();
    for (const text of ['first question', 'first answer', 'terminal question', 'terminal answer']) expect(shown).toContain(text);
    await again.page.getByRole('textbox', { name: 'Message' }).fill('web again');
    await again.page.getByRole('textbox', { name: 'Message' }).press('Enter');
    await expect.poll(() => again.page.locator('article.assistant').last().textContent()).toContain('back on the web');
    expect(again.fake.requests[0]?.rawBody).toContain('terminal question');
  });
});
