import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '@crystal/testkit';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { type Scenario, scenario, userTexts } from './pty-harness.js';

let current: Scenario | undefined;
afterEach(async () => {
  await current?.dispose();
  current = undefined;
});

function workspace(): string {
  const ws = tempDir('crystal-ws-');
  mkdirSync(join(ws, 'src', 'parser'), { recursive: true });
  mkdirSync(join(ws, 'secret'), { recursive: true });
  mkdirSync(join(ws, 'node_modules', 'dep'), { recursive: true });
  writeFileSync(join(ws, '.gitignore'), 'secret/\n');
  writeFileSync(join(ws, 'src', 'parser', 'lexer.ts'), 'export function lex(input: string) {\n  return input.split(" ");\n}\n');
  writeFileSync(join(ws, 'src', 'parser', 'parse.ts'), 'export const parse = 1;\n');
  writeFileSync(join(ws, 'secret', 'lexer-notes.txt'), 'ignored by git\n');
  writeFileSync(join(ws, 'node_modules', 'dep', 'lexer.js'), 'skipped folder\n');
  return ws;
}

describe('@path mentions', () => {
  it('TUIX-5 @ + Tab completes fuzzily past ignored files, and the file content is attached to the message', async () => {
    current = await scenario({ workspace: workspace(), replies: [{ text: 'The lexer splits on spaces.' }] });
    const { session, fake } = current;
    await session.waitFor('Type a message');
    await session.type('explain @lxr');
    session.write('\t');
    await session.waitFor('Work › explain @src/parser/lexer.ts');
    await session.type('please');
    session.write('\r');
    const screen = await session.waitFor('The lexer splits on spaces.');
    expect(screen).toContain('[attached src/parser/lexer.ts · 3 lines]');
    expect(screen).not.toContain('return input.split');
    const sent = userTexts(fake)[0]?.at(-1) ?? '';
    expect(sent.startsWith('explain @src/parser/lexer.ts please')).toBe(true);
    expect(sent).toContain(
      '<file path="src/parser/lexer.ts">\nexport function lex(input: string) {\n  return input.split(" ");\n}\n</file>',
    );
  });

  it('TUIX-5 several matches open a searchable list, best first; a gitignored file is never offered', async () => {
    current = await scenario({ workspace: workspace(), replies: [] });
    const { session } = current;
    await session.waitFor('Type a message');
    await session.type('@pars');
    session.write('\t');
    const list = await session.waitFor('Files matching @pars');
    const rows = session.lines();
    const first = rows.findIndex((l) => l.includes('› src/parser/parse.ts'));
    const second = rows.findIndex((l) => l.includes('src/parser/lexer.ts'));
    expect(first).toBeGreaterThan(-1);
    expect(second).toBeGreaterThan(first);
    expect(list).not.toContain('secret/');
    expect(list).not.toContain('node_modules');
    session.write('\x1b[B\r');
    await session.waitFor('Work › @src/parser/lexer.ts');
  });

  it('TUIX-5 an @ image is attached as an image, and a path outside the workspace is refused with a note', async () => {
    const ws = workspace();
    writeFileSync(
      join(ws, 'shot.png'),
      await sharp({ create: { width: 16, height: 16, channels: 3, background: '#ff0000' } })
        .png()
        .toBuffer(),
    );
    const outside = tempDir('crystal-outside-');
    writeFileSync(join(outside, 'x.txt'), 'outside\n');
    current = await scenario({ workspace: ws, modelExtra: { imageInput: true }, replies: [{ text: 'A red square.' }] });
    const { session, fake } = current;
    await session.waitFor('Type a message');
    await session.type(`what is @shot.png and @${join(outside, 'x.txt')}`);
    session.write('\r');
    await session.waitFor('is outside the workspace; it was not attached.');
    await session.waitFor('A red square.');
    const body = JSON.stringify(fake.requests[0]?.body);
    expect(body).toContain('image_url');
    expect(body).toContain('[Image #1]');
    expect(body).not.toContain('outside\\n');
  });
});
