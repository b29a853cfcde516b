/**
 * Front matter of Markdown extension files (`SKILL.md`, command files): a `---` block of YAML
 * at the very top. Only the YAML these files use is read: `key: value` scalars (plain, single
 * or double quoted), folded (`>`) and literal (`|`) block scalars with their chomping
 * indicators, and lists (`[a, b]` flow or `- item` block). Anything else in the block is
 * ignored rather than refused, so a file written for Claude Code or OpenCode still loads.
 */

export type FrontMatterValue = string | readonly string[];

export interface FrontMatter {
  readonly fields: Readonly<Record<string, FrontMatterValue>>;
  /** The text after the front matter (the whole text when there is none). */
  readonly body: string;
  /** Whether the text opened with a closed `---` block. */
  readonly present: boolean;
}

export function parseFrontMatter(text: string): FrontMatter {
  const source = text.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  const open = /^---[ \t]*\n/.exec(source);
  if (!open) return { fields: {}, body: source, present: false };
  const rest = source.slice(open[0].length);
  const close = /(^|\n)---[ \t]*(\n|$)/.exec(rest);
  if (!close) return { fields: {}, body: source, present: false };
  const block = rest.slice(0, close.index);
  const body = rest.slice(close.index + close[0].length);
  return { fields: parseBlock(block.split('\n')), body, present: true };
}

function parseBlock(lines: readonly string[]): Record<string, FrontMatterValue> {
  const fields: Record<string, FrontMatterValue> = {};
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] as string;
    const match = /^([A-Za-z0-9_-]+)[ \t]*:(?:[ \t]+(.*))?$/.exec(line);
    i++;
    if (!match) continue;
    const key = match[1] as string;
    const raw = (match[2] ?? '').trim();
    const block = /^([|>])([+-]?)\d*[+-]?(\s+#.*)?$/.exec(raw);
    if (block) {
      const taken: string[] = [];
      while (i < lines.length && (/^\s/.test(lines[i] as string) || (lines[i] as string).trim() === ''))
        taken.push(lines[i++] as string);
      fields[key] = blockScalar(taken, block[1] === '>', block[2] ?? '');
      continue;
    }
    if (raw === '') {
      const items: string[] = [];
      while (i < lines.length && /^\s*-\s+/.test(lines[i] as string))
        items.push(scalar((lines[i++] as string).replace(/^\s*-\s+/, '')));
      if (items.length > 0) fields[key] = items;
      else {
        // A plain scalar continued on indented lines.
        const taken: string[] = [];
        while (i < lines.length && /^\s+\S/.test(lines[i] as string)) taken.push((lines[i++] as string).trim());
        fields[key] = taken.join(' ');
      }
      continue;
    }
    if (raw.startsWith('[') && raw.endsWith(']')) {
      fields[key] = raw
        .slice(1, -1)
        .split(',')
        .map((item) => scalar(item.trim()))
        .filter((item) => item !== '');
      continue;
    }
    const continued = [raw];
    while (i < lines.length && /^\s+\S/.test(lines[i] as string) && !/^\s*-\s/.test(lines[i] as string)) {
      continued.push((lines[i++] as string).trim());
    }
    fields[key] = scalar(continued.join(' '));
  }
  return fields;
}

function blockScalar(lines: readonly string[], folded: boolean, chomp: string): string {
  const indent = Math.min(...lines.filter((l) => l.trim() !== '').map((l) => (/^\s*/.exec(l) as RegExpExecArray)[0].length));
  const text = lines.map((l) => (l.trim() === '' ? '' : l.slice(Number.isFinite(indent) ? indent : 0)));
  let value: string;
  if (folded) {
    value = '';
    for (const [index, line] of text.entries()) {
      if (index === 0) value = line;
      else if (line === '') value += '\n';
      else value += value.endsWith('\n') || value === '' ? line : ` ${line}`;
    }
  } else value = text.join('\n');
  const trimmed = value.replace(/\n+$/, '');
  if (chomp === '-') return trimmed;
  if (chomp === '+') return `${value}\n`;
  return trimmed === '' ? '' : `${trimmed}\n`;
}

function scalar(raw: string): string {
  const value = raw.replace(/\s+#.*$/, '').trim();
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
    try {
      return JSON.parse(value) as string;
    } catch {
      return value.slice(1, -1);
    }
  }
  if (value.length >= 2 && value.startsWith("'") && value.endsWith("'")) return value.slice(1, -1).replace(/''/g, "'");
  return value;
}

/** A field as text ('' when absent); a flow list reads back as written (`argument-hint: [file]`). */
export function textField(fields: FrontMatter['fields'], key: string): string {
  const value = fields[key];
  if (value === undefined) return '';
  return typeof value === 'string' ? value.trim() : `[${value.join(', ')}]`;
}

/** A field as a list: a YAML list, or a comma- or space-separated string (Claude's `allowed-tools`). */
export function listField(fields: FrontMatter['fields'], key: string): string[] {
  const value = fields[key];
  if (value === undefined) return [];
  if (typeof value !== 'string') return [...value];
  return value
    .split(/,\s*|\s+(?![^(]*\))/)
    .map((item) => item.trim())
    .filter(Boolean);
}
