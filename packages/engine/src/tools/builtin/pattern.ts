/**
 * grep's regular expression: compiled once (an invalid one is a model-visible error naming it)
 * and run under a time limit. JavaScript regular expressions backtrack, so a pattern such as
 * `(a+)+$` can take exponential time on one line; run on the engine's thread, that would freeze
 * the session (no cancel). Matching therefore runs in a `vm` context with a timeout, as the
 * reference gives its regex one second per line: one second per line ripgrep reports, and one
 * second plus a millisecond per KiB for a file the walker scans.
 */
import vm from 'node:vm';
import { ToolFailure } from './failure.js';

export const LINE_TIMEOUT_MS = 1000;

export interface CompiledPattern {
  readonly pattern: string;
  readonly regex: RegExp;
  /** What ripgrep is given (a leading `(?i)` becomes its --ignore-case). */
  readonly source: string;
  readonly ignoreCase: boolean;
}

/** Compiles the model's pattern; `(?i)` at the start means case-insensitive, as in most engines. */
export function compilePattern(pattern: string): CompiledPattern {
  const ignoreCase = pattern.startsWith('(?i)');
  const source = ignoreCase ? pattern.slice(4) : pattern;
  try {
    return { pattern, regex: new RegExp(source, ignoreCase ? 'i' : ''), source, ignoreCase };
  } catch (error) {
    const reason = error instanceof Error ? error.message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, '') : '';
    throw new ToolFailure(
      `Invalid regular expression '${pattern}': ${reason}. Escape characters such as ( [ { + * ? with a backslash to match them literally.`,
    );
  }
}

const SCAN_MANY_SOURCE = `(function (re, texts, scan) {
  const out = [];
  for (let i = 0; i < texts.length; i++) out.push(scan(re, texts[i]));
  return out;
})`;

const SCAN_SOURCE = `(function (re, text) {
  const out = [];
  let start = 0;
  let line = 0;
  while (start < text.length) {
    const end = text.indexOf('\\n', start);
    const raw = text.slice(start, end === -1 ? text.length : end);
    line++;
    const content = raw.endsWith('\\r') ? raw.slice(0, -1) : raw;
    if (re.test(content)) out.push(line, content);
    if (end === -1) break;
    start = end + 1;
  }
  return out;
})`;

/** One sandbox per grep call: the scanner is compiled once, each run is bounded in time. */
export class GuardedMatcher {
  private readonly context: vm.Context;
  private readonly scanCall = new vm.Script('scan(re, text)');
  private readonly scanManyCall = new vm.Script('scanMany(re, texts, scan)');
  private readonly testCall = new vm.Script('re.test(text)');

  constructor(private readonly compiled: CompiledPattern) {
    this.context = vm.createContext({ re: compiled.regex, text: '' });
    this.context.scan = new vm.Script(SCAN_SOURCE).runInContext(this.context);
    this.context.scanMany = new vm.Script(SCAN_MANY_SOURCE).runInContext(this.context);
  }

  /**
   * The matching lines of many files in one bounded run: entering the sandbox with a timeout
   * costs a watchdog per call, so files are scanned in batches (one second plus a millisecond
   * per KiB of the whole batch).
   */
  scanMany(texts: readonly string[], where: string): Array<Array<{ line: number; text: string }>> {
    this.context.texts = texts;
    const kib = texts.reduce((sum, t) => sum + t.length, 0) / 1024;
    const flat = this.run(this.scanManyCall, LINE_TIMEOUT_MS + Math.ceil(kib), where) as Array<Array<number | string>>;
    this.context.texts = [];
    return flat.map((one) => {
      const matches: Array<{ line: number; text: string }> = [];
      for (let i = 0; i < one.length; i += 2) matches.push({ line: one[i] as number, text: one[i + 1] as string });
      return matches;
    });
  }

  /** Whether one line matches; at most one second. */
  test(line: string, where: string): boolean {
    this.context.text = line;
    return this.run(this.testCall, LINE_TIMEOUT_MS, where) as boolean;
  }

  /** The matching lines of a file's text (1-based numbers, without line ends). */
  scan(text: string, where: string): Array<{ line: number; text: string }> {
    this.context.text = text;
    const flat = this.run(this.scanCall, LINE_TIMEOUT_MS + Math.ceil(text.length / 1024), where) as Array<number | string>;
    this.context.text = '';
    const matches: Array<{ line: number; text: string }> = [];
    for (let i = 0; i < flat.length; i += 2) matches.push({ line: flat[i] as number, text: flat[i + 1] as string });
    return matches;
  }

  private run(script: vm.Script, timeout: number, where: string): unknown {
    try {
      return script.runInContext(this.context, { timeout });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') {
        throw new ToolFailure(
          `The regular expression '${this.compiled.pattern}' took too long on ${where}; simplify it (nested quantifiers such as (a+)+ backtrack without end).`,
        );
      }
      throw error;
    }
  }
}
