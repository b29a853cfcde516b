import { beforeAll, describe, expect, it } from 'vitest';
import { stripAnsi } from '../src/ansi.js';
import { loadMarkdown, renderMarkdown } from '../src/markdown.js';
import { MarkdownStream, neutralSplit } from '../src/markdown-stream.js';
import { plainRows } from './helpers.js';

beforeAll(() => loadMarkdown());

const plain = (src: string, width = 60): string[] => renderMarkdown(src, width).map(stripAnsi);

function streamed(src: string, width: number, pieces: RegExp): string[] {
  const s = new MarkdownStream();
  for (const piece of src.match(pieces) ?? []) {
    s.append(piece);
    s.rows(width);
  }
  return plainRows(s.rows(width));
}

describe('Markdown rendering (TUI-2)', () => {
  it('TUI-2 headings, bold, inline code, lists, fenced code with a gutter, quotes and rules', () => {
    const rows = plain(
      '# Title\n\nSome **bold** and `code`.\n\n- one\n- two\n\n1. first\n2. second\n\n```js\nconst x = 1;\n```\n\n> quoted\n\n---\n',
    );
    expect(rows).toEqual([
      'Title',
      '',
      'Some bold and code.',
      '',
      '• one',
      '• two',
      '',
      '1. first',
      '2. second',
      '',
      '│ const x = 1;',
      '',
      '│ quoted',
      '',
      '─'.repeat(60),
    ]);
  });

  it('TUI-2 styles: headings and bold are bold, code is coloured, keywords highlighted', () => {
    const [heading] = renderMarkdown('# Title', 40);
    expect(heading).toContain('\x1b[1;36mTitle');
    const [para] = renderMarkdown('a **b** `c`', 40);
    expect(para).toContain('\x1b[1mb\x1b[0m');
    expect(para).toContain('\x1b[33mc\x1b[0m');
    const [code] = renderMarkdown('```ts\nconst x = "s"; // note\n```', 40);
    expect(code).toContain('\x1b[35mconst');
    expect(code).toContain('\x1b[32m"s"');
    expect(code).toContain('\x1b[3;90m// note');
  });

  it('wraps paragraphs at the width and keeps list indentation', () => {
    const rows = plain('- a list item that is long enough to wrap around', 20);
    expect(rows).toEqual(['• a list item that', '  is long enough to', '  wrap around']);
  });

  it('sanitises escape sequences and controls in model text', () => {
    expect(plain('red \x1b[31mtext\x1b[0m and \x07bell')).toEqual(['red text and bell']);
  });

  it('decodes HTML entities the model wrote', () => {
    expect(plain('a &amp; b &lt;c&gt;')).toEqual(['a & b <c>']);
  });
});

describe('MarkdownStream', () => {
  const sample =
    '# Heading\n\nA paragraph with **bold** text.\n\n- item one\n- item two\n\n```py\nprint("hi")\n# comment\n```\n\nTail text.\n';

  it('TUI-2 renders what it has while streaming, and ends equal to the whole render', () => {
    expect(streamed(sample, 40, /[\s\S]{1,3}/g)).toEqual(plain(sample, 40));
  });

  it('freezes a very long paragraph in pieces and still matches the whole render', () => {
    const src = Array.from({ length: 4000 }, (_, i) => (i % 97 === 0 ? '**w**' : `w${i}`)).join(' ');
    expect(streamed(src, 50, /\S+\s?/g)).toEqual(plain(src, 50));
  });

  it('TUI-2 a long paragraph of mixed spans (code, emphasis, links) frozen in many small pieces still matches the whole render', () => {
    const words = ['plain', '`code x`', '*it*', '**bold words**', '[a link](https://e.x/y)', '~~gone~~', 'snake_case', 'end.'];
    const src = Array.from({ length: 1500 }, (_, i) => words[(i * 7) % words.length]).join(' ');
    for (const width of [37, 80]) expect(streamed(src, width, /[\s\S]{1,5}/g)).toEqual(plain(src, width));
  });

  it('TUI-2 a long plain paragraph matches the whole render of what arrived after every piece, styles included', () => {
    const words = ['plain', 'words,', 'and', '(some)', 'punctuation.', "it's", '"quoted"', '50%', 'a-b/c', 'x=1+2;', 'Why?'];
    const text = Array.from({ length: 900 }, (_, i) => words[(i * 5) % words.length]).join(' ');
    // Once with one `www.e.x` in the middle: a GFM link, so the tail or piece holding it is lexed.
    const linked = text.replace(/(?<=^(?:\S+ ){450})\S+/, 'www.e.x');
    for (const [src, width] of [
      [text, 23],
      [text, 80],
      [linked, 23],
      [linked, 80],
    ] as const) {
      const s = new MarkdownStream();
      let so = '';
      for (const piece of src.match(/[\s\S]{1,6}/g) ?? []) {
        s.append(piece);
        so += piece;
        const rows = s.rows(width);
        const got = Array.from({ length: rows.count }, (_, i) => rows.row(i));
        expect(got).toEqual(renderMarkdown(so, width));
      }
    }
  });

  it('TUI-2 a frame reads only the text since the last frozen piece however long the reply grows, and the rows stay those of the whole render (issue 22)', () => {
    const words = (n: number, w: string): string => Array.from({ length: n }, (_, i) => `${w}${i}`).join(' ');
    const src = [
      words(900, 'a'), // a line of 5,000 characters
      words(700, 'b'), // the same paragraph's second line
      `${' '.repeat(1100)}and its third, after blanks longer than the kept head`,
      'and a fourth',
      '',
      ' '.repeat(2000), // a blank line longer than the scanner keeps of a line
      '',
      '```ts',
      `const s = "${'x'.repeat(3000)}";`,
      `\`\`\`${' '.repeat(1500)}not a closing fence`, // code: past the kept head, not blank
      '```',
      `\`\`\`${' '.repeat(1500)}sh`, // a fence whose info string starts past the kept head
      'echo hi',
      `\`\`\`${' '.repeat(1500)}`, // closed by a fence line of 1,500 trailing blanks
      '- an item',
      words(1500, 'c'),
      '',
      'The end.',
    ].join('\n');
    expect(src.length).toBeGreaterThan(20_000);
    for (const width of [41, 80]) {
      const s = new MarkdownStream();
      let so = '';
      let most = 0;
      for (const piece of src.match(/[\s\S]{1,97}/g) ?? []) {
        s.append(piece);
        so += piece;
        const rows = plainRows(s.rows(width));
        most = Math.max(most, s.workingLength);
        // Compared with the whole render at each newline (cheaper than after every piece).
        if (piece.includes('\n')) expect(rows).toEqual(plain(so, width));
      }
      expect(plainRows(s.rows(width))).toEqual(plain(src, width));
      // Released in steps of 4,096 characters behind the frozen text: at most a step, the longest
      // open block (the short code fence, 4,600 characters) and a frame's delta.
      expect(most).toBeLessThan(12_000);
      expect(s.text).toBe(src);
      // A new width lays out from the whole source again.
      expect(plainRows(s.rows(width + 7))).toEqual(plain(src, width + 7));
    }
  });

  it('freezes a long code fence line by line and matches the whole render', () => {
    const body = Array.from({ length: 300 }, (_, i) => `let v${i} = ${i}; // line`).join('\n');
    const src = `Intro:\n\`\`\`ts\n${body}\n\`\`\`\n\nAfter.\n`;
    expect(streamed(src, 60, /[\s\S]{1,7}/g)).toEqual(plain(src, 60));
  });

  it('lays out again from the source when the width changes', () => {
    const s = new MarkdownStream();
    s.append('word '.repeat(50));
    plainRows(s.rows(30));
    expect(plainRows(s.rows(80))).toEqual(plain('word '.repeat(50), 80));
  });

  it('neutralSplit only splits where no inline span is open and a word follows', () => {
    expect(neutralSplit('aa **bb cc** dd ee', 17)).toBe(15);
    expect(neutralSplit('aa **bb cc dd ee', 15)).toBeUndefined();
    expect(neutralSplit('aa bb **cc dd ee', 15)).toBe(2);
    expect(neutralSplit('`a b c d`', 8)).toBeUndefined();
    expect(neutralSplit('a snake_case word here', 20)).toBe(17);
  });
});
