import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '@crystal/testkit';
import sharp from 'sharp';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Scenario, scenario } from './pty-harness.js';

let current: Scenario | undefined;
afterEach(async () => {
  await current?.dispose();
  current = undefined;
});

let png = '';
let notImage = '';
beforeAll(async () => {
  const dir = tempDir('crystal-clip-');
  png = join(dir, 'shot.png');
  writeFileSync(
    png,
    await sharp({ create: { width: 32, height: 24, channels: 3, background: '#3a7bd5' } })
      .png()
      .toBuffer(),
  );
  notImage = join(dir, 'notes.png');
  writeFileSync(notImage, 'this is text, not an image');
});

/** The row of the composer (the last row that starts with the prompt). */
function composerRow(lines: readonly string[]): string {
  return [...lines].reverse().find((l) => l.startsWith('Work › ')) ?? '';
}

describe('image markers in the composer', () => {
  it('IMG-2 a pasted marker is one atomic span: Backspace and arrows never leave part of it', async () => {
    current = await scenario({ replies: [], env: { CRYSTAL_CLIPBOARD_FILE: png } });
    const { session } = current;
    await session.waitFor('Type a message');
    await session.type('look at ');
    session.write('\x16');
    await session.waitFor('Work › look at [Image #1]');
    await session.type(' now');
    await session.waitFor('Work › look at [Image #1] now');
    // Left over " now" then once more: the cursor jumps over the whole marker.
    session.write('\x1b[D\x1b[D\x1b[D\x1b[D');
    session.write('\x1b[D');
    session.write('X');
    await session.waitFor('Work › look at X[Image #1] now');
    // Delete forward removes the whole marker.
    session.write('\x1b[3~');
    await session.waitFor('Work › look at X now');
    expect(composerRow(session.lines())).not.toContain('Image');
    // Paste another (number 2: numbers are never reused), then Backspace removes it whole.
    session.write('\x05');
    session.write('\x16');
    await session.waitFor('Work › look at X now[Image #2]');
    session.write('\x7f');
    const screen = await session.waitFor((s) => composerRow(s.split('\n')) === 'Work › look at X now');
    expect(screen).not.toMatch(/\[Image #2|Image #2\]|#2\]/);
  });

  it('IMG-3 the same text typed by the user stays plain: Backspace removes one character', async () => {
    current = await scenario({ replies: [] });
    const { session } = current;
    await session.waitFor('Type a message');
    await session.type('see [Image #1]');
    await session.waitFor('Work › see [Image #1]');
    session.write('\x7f');
    await session.waitFor((s) => composerRow(s.split('\n')) === 'Work › see [Image #1');
  });

  it('IMG-21 IMG-4 Ctrl+V and Enter in one input batch: the paste finishes attaching before the submit', async () => {
    current = await scenario({
      replies: [{ text: 'A blue rectangle.' }],
      modelExtra: { imageInput: true },
      env: { CRYSTAL_CLIPBOARD_FILE: png },
    });
    const { session, fake } = current;
    await session.waitFor('Type a message');
    await session.type('what is this? ');
    session.write('\x16\r');
    await session.waitFor('A blue rectangle.');
    expect(session.screen()).toContain('▌ what is this? [Image #1]');
    const body = JSON.stringify(fake.requests[0]?.body);
    expect(body).toContain('image_url');
    expect(body).toContain('data:image/png;base64,');
    expect(body).not.toContain('\\u2063');
  });

  it('CLIP-6 a reader failure and unusable clipboard bytes show distinct errors on the status line', async () => {
    current = await scenario({ replies: [], env: { CRYSTAL_CLIPBOARD_FILE: join(tempDir('crystal-none-'), 'missing.png') } });
    const { session } = current;
    await session.waitFor('Type a message');
    session.write('\x16');
    const failed = await session.waitFor(/The clipboard stand-in .*missing\.png could not be read/);
    expect(composerRow(failed.split('\n'))).not.toContain('[Image');
    await current.dispose();
    current = await scenario({ replies: [], env: { CRYSTAL_CLIPBOARD_FILE: notImage } });
    await current.session.waitFor('Type a message');
    current.session.write('\x16');
    await current.session.waitFor(/The clipboard image was not attached: .*not a supported PNG, JPEG, GIF, or WebP image/);
  });
});
