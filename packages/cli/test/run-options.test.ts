/**
 * CLI-2 (issue 22 item 4): `crystal run`'s usual command line is read without node:util's
 * parseArgs (its first call costs start-up time); what the direct reading accepts it reads
 * exactly as parseArgs does, and everything else still goes to parseArgs and its messages.
 */
import { parseArgs } from 'node:util';
import { describe, expect, it } from 'vitest';
import { OPTIONS, parsePlain, parseRunOptions } from '../src/run-options.js';

/** What node:util's parseArgs makes of `argv` (values as a plain object), or the message it throws. */
function reference(argv: string[]): { values: Record<string, unknown>; positionals: string[] } | { error: string } {
  try {
    const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, strict: true, options: OPTIONS });
    return { values: { ...values }, positionals };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

const plain = (argv: string[]) => {
  const parsed = parsePlain(argv);
  return parsed && { values: { ...parsed.values }, positionals: parsed.positionals };
};

/** A deterministic generator (mulberry32), so a failure names a reproducible case. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = [
  ...Object.keys(OPTIONS).map((name) => `--${name}`),
  '--format=json',
  '--unknown',
  '--',
  '-',
  '-p',
  '-m',
  '-pfake',
  '--Format',
  'json',
  'text',
  'hi there',
  '',
  '-1',
  '--image',
  'a.png',
  'unlimited',
  '5',
  '/tmp/ws',
];

describe('CLI-2 (issue 22 item 4) the usual crystal run command line is read without parseArgs', () => {
  it('CLI-2 the common lines are read directly, with exactly what parseArgs gives', () => {
    const lines = [
      ['--format', 'json', 'hi'],
      ['hi', '--format', 'stream-json'],
      ['--model', 'm', '--provider', 'p', '--plan', 'do', 'it'],
      ['--image', 'a.png', '--image', 'b.png', 'look'],
      ['--resume', '20261206-040000-abcdef', '--show-thinking', '--trust-workspace', 'go on'],
      ['--model-calls', 'unlimited', '--duration', '30', '--bash-timeout', '10', '--skills', 'off', 'x'],
      ['-', 'prompt'],
      ['--format', 'json', '--format', 'text', 'last wins'],
      [],
    ];
    for (const argv of lines) {
      expect(plain(argv), JSON.stringify(argv)).toEqual(reference(argv));
    }
  });

  it('CLI-2 anything else goes to parseArgs (short options, --name=value, --, unknown options, values starting with -)', () => {
    for (const argv of [
      ['-p', 'fake', 'hi'],
      ['--format=json', 'hi'],
      ['--', '--format', 'json'],
      ['--no-such-flag', 'hi'],
      ['--format', '-x'],
      ['--format'],
      ['--model', '--plan'],
    ]) {
      expect(parsePlain(argv), JSON.stringify(argv)).toBeUndefined();
    }
    expect(() => parseRunOptions(['--no-such-flag'])).toThrow(
      /^Unknown option '--no-such-flag'\..*Run 'crystal run --help' for the options\.$/,
    );
    expect(() => parseRunOptions(['--format'])).toThrow(/Option '--format <value>' argument missing/);
    expect(parseRunOptions(['-p', 'fake', '--format=json', 'hi'])).toMatchObject({
      provider: 'fake',
      format: 'json',
      prompt: 'hi',
    });
  });

  it('CLI-2 on 20,000 generated command lines the direct reading, where it reads one, agrees with parseArgs', () => {
    const next = random(22);
    let read = 0;
    for (let n = 0; n < 20_000; n++) {
      const argv = Array.from({ length: Math.floor(next() * 7) }, () => WORDS[Math.floor(next() * WORDS.length)] as string);
      const direct = plain(argv);
      if (direct === undefined) continue;
      read++;
      expect(direct, JSON.stringify(argv)).toEqual(reference(argv));
    }
    // The generator reaches both paths often.
    expect(read).toBeGreaterThan(1_000);
    expect(read).toBeLessThan(19_000);
  });
});
