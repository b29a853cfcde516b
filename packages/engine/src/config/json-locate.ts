/**
 * Finds the line of a key path in JSON text, and the line and column of a JSON syntax error,
 * so configuration errors can point at the exact place (CONF-5). A small scanner of our own:
 * JSON.parse reports only a character offset and no path.
 */

export interface JsonPosition {
  readonly line: number;
  readonly column: number;
}

export function positionAt(text: string, offset: number): JsonPosition {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < Math.min(offset, text.length); i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

/** Parses JSON; on failure returns the position of the error and V8's message. */
export function parseJson(text: string): { ok: true; value: unknown } | { ok: false; message: string; position: JsonPosition } {
  // REL-12: nesting is bounded before anything recursive looks at the text (no stack overflow).
  const deep = nestingBeyond(text, MAX_JSON_DEPTH);
  if (deep !== undefined) {
    return { ok: false, message: `nested deeper than ${MAX_JSON_DEPTH} levels`, position: positionAt(text, deep) };
  }
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    const message = (error as Error).message;
    const match = /position (\d+)/.exec(message);
    const offset = match ? Number(match[1]) : jsonErrorOffset(text);
    const short = message.replace(/\s*\(line \d+ column \d+\)/, '').replace(/, ".*" is not valid JSON$/s, '');
    return { ok: false, message: short, position: positionAt(text, offset) };
  }
}

/** Configuration files never need more nesting than this. */
export const MAX_JSON_DEPTH = 256;

/** The offset where `[`/`{` nesting first passes `max` (outside strings), or undefined. */
export function nestingBeyond(text: string, max: number): number | undefined {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++;
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      if (++depth > max) return i;
    } else if (c === 93 || c === 125) depth--;
  }
  return undefined;
}

/** The offset of the first JSON syntax error (Node 20's JSON.parse often omits it). */
export function jsonErrorOffset(text: string): number {
  let i = 0;
  const ws = (): void => {
    while (i < text.length && ' \t\r\n'.includes(text[i] as string)) i++;
  };
  const fail = (): never => {
    throw i;
  };
  const literal = (word: string): void => {
    if (text.startsWith(word, i)) i += word.length;
    else fail();
  };
  const string = (): void => {
    i++;
    while (i < text.length && text[i] !== '"') {
      if (text.charCodeAt(i) < 0x20) fail();
      i += text[i] === '\\' ? 2 : 1;
    }
    if (i >= text.length) fail();
    i++;
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail();
        string();
        ws();
        if (text[i] !== ':') fail();
        i++;
        value();
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === '}') {
          i++;
          return;
        } else fail();
      }
    } else if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (;;) {
        value();
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === ']') {
          i++;
          return;
        } else fail();
      }
    } else if (c === '"') string();
    else if (c === 't') literal('true');
    else if (c === 'f') literal('false');
    else if (c === 'n') literal('null');
    else {
      const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i));
      if (!m || m[0] === '') fail();
      i += (m as RegExpExecArray)[0].length;
    }
  };
  try {
    value();
    ws();
    return Math.min(i, text.length);
  } catch (offset) {
    return Math.min(offset as number, text.length);
  }
}

/** Returns a map from key path (`a.b.0.c`) to the 1-based line where that value's key starts. */
export function keyLines(text: string): Map<string, number> {
  const lines = new Map<string, number>();
  let i = 0;
  let line = 1;
  const skipWs = (): void => {
    while (i < text.length) {
      const c = text[i];
      if (c === '\n') line++;
      else if (c !== ' ' && c !== '\t' && c !== '\r') return;
      i++;
    }
  };
  const readString = (): string => {
    const start = i;
    i++;
    while (i < text.length && text[i] !== '"') {
      if (text[i] === '\\') i++;
      i++;
    }
    i++;
    try {
      return JSON.parse(text.slice(start, i)) as string;
    } catch {
      return text.slice(start + 1, i - 1);
    }
  };
  const value = (path: string): void => {
    skipWs();
    const c = text[i];
    if (c === '{') {
      i++;
      for (;;) {
        skipWs();
        if (text[i] === '}') {
          i++;
          return;
        }
        if (text[i] !== '"') return;
        const keyLine = line;
        const key = readString();
        const child = path === '' ? key : `${path}.${key}`;
        if (!lines.has(child)) lines.set(child, keyLine);
        skipWs();
        if (text[i] === ':') i++;
        value(child);
        skipWs();
        if (text[i] === ',') i++;
        else if (text[i] === '}') {
          i++;
          return;
        } else return;
      }
    }
    if (c === '[') {
      i++;
      for (let index = 0; ; index++) {
        skipWs();
        if (text[i] === ']') {
          i++;
          return;
        }
        const child = path === '' ? String(index) : `${path}.${index}`;
        if (!lines.has(child)) lines.set(child, line);
        value(child);
        skipWs();
        if (text[i] === ',') i++;
        else if (text[i] === ']') {
          i++;
          return;
        } else return;
      }
    }
    if (c === '"') {
      readString();
      return;
    }
    while (i < text.length && !/[,}\]\s]/.test(text[i] as string)) i++;
  };
  value('');
  return lines;
}

/** The line of `path`, or of its nearest ancestor that has one. */
export function lineOfPath(lines: Map<string, number>, path: readonly (string | number)[]): number | undefined {
  for (let n = path.length; n > 0; n--) {
    const line = lines.get(path.slice(0, n).join('.'));
    if (line !== undefined) return line;
  }
  return undefined;
}
