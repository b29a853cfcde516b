/**
 * Terminal input bytes → key events. Handles CSI/SS3 keys with modifiers, bracketed paste
 * (also split across reads), SGR mouse wheel, Ctrl and Alt keys. A lone ESC at the end of a
 * read is the Escape key; an escape sequence cut by the read boundary waits for the rest.
 * A printable burst with a newline inside it is a paste even without bracketed markers.
 */

export type KeyName =
  | 'enter'
  | 'tab'
  | 'backtab'
  | 'backspace'
  | 'delete'
  | 'escape'
  | 'up'
  | 'down'
  | 'left'
  | 'right'
  | 'home'
  | 'end'
  | 'pageup'
  | 'pagedown'
  | 'insert'
  | 'space'
  | 'f1';

export type InputEvent =
  | { readonly type: 'key'; readonly name: KeyName; readonly ctrl?: boolean; readonly alt?: boolean; readonly shift?: boolean }
  /** Ctrl+letter (`c` for Ctrl+C). Ctrl+J is `j`. */
  | { readonly type: 'ctrl'; readonly letter: string }
  | { readonly type: 'alt'; readonly text: string }
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'paste'; readonly text: string }
  | { readonly type: 'wheel'; readonly direction: 'up' | 'down' };

const PASTE_START = '\x1b[200~';
const PASTE_END = '\x1b[201~';

const CSI_KEYS: Record<string, KeyName> = {
  A: 'up',
  B: 'down',
  C: 'right',
  D: 'left',
  H: 'home',
  F: 'end',
  Z: 'backtab',
  P: 'f1',
};

const TILDE_KEYS: Record<string, KeyName> = {
  '1': 'home',
  '2': 'insert',
  '3': 'delete',
  '4': 'end',
  '5': 'pageup',
  '6': 'pagedown',
  '7': 'home',
  '8': 'end',
};

function modifiers(param: string | undefined): { ctrl?: boolean; alt?: boolean; shift?: boolean } {
  const m = Number(param ?? '1') - 1;
  if (!(m > 0)) return {};
  return { ...(m & 1 ? { shift: true } : {}), ...(m & 2 ? { alt: true } : {}), ...(m & 4 ? { ctrl: true } : {}) };
}

export class InputDecoder {
  private pending = '';
  private paste: string | undefined;

  /** Decodes one read; events come out in input order. */
  feed(data: string): InputEvent[] {
    const events: InputEvent[] = [];
    let input = this.pending + data;
    this.pending = '';
    if (this.paste === undefined && !input.includes('\x1b')) {
      // Line breaks at the start of a read are Enter keys typed before the rest (a key typed
      // right after Enter can share its read); only what follows them can be a paste.
      const lead = /^(?:\r\n?)*/.exec(input)?.[0] ?? '';
      if (isPasteBurst(input.slice(lead.length))) {
        for (const _ of lead.replace(/\r\n/g, '\r')) events.push({ type: 'key', name: 'enter' });
        events.push({ type: 'paste', text: input.slice(lead.length).replace(/\r\n?/g, '\n') });
        return events;
      }
    }
    let text = '';
    const flushText = (): void => {
      if (text !== '') events.push({ type: 'text', text });
      text = '';
    };
    let i = 0;
    while (i < input.length) {
      if (this.paste !== undefined) {
        const end = input.indexOf(PASTE_END, i);
        if (end === -1) {
          // Keep a possible partial end marker for the next read.
          const keep = partialSuffix(input.slice(i), PASTE_END);
          this.paste += input.slice(i, input.length - keep);
          this.pending = input.slice(input.length - keep);
          return events;
        }
        this.paste += input.slice(i, end);
        events.push({ type: 'paste', text: this.paste.replace(/\r\n?/g, '\n') });
        this.paste = undefined;
        i = end + PASTE_END.length;
        continue;
      }
      const ch = input[i] as string;
      const code = ch.charCodeAt(0);
      if (ch === '\x1b') {
        flushText();
        if (input.startsWith(PASTE_START, i)) {
          this.paste = '';
          i += PASTE_START.length;
          continue;
        }
        const parsed = this.escape(input, i);
        if (parsed === 'incomplete') {
          this.pending = input.slice(i);
          input = '';
          break;
        }
        if (parsed.event) events.push(parsed.event);
        i = parsed.next;
        continue;
      }
      if (code === 0x0d) {
        flushText();
        events.push({ type: 'key', name: 'enter' });
        i += input[i + 1] === '\n' ? 2 : 1;
        continue;
      }
      if (code === 0x09) {
        flushText();
        events.push({ type: 'key', name: 'tab' });
        i++;
        continue;
      }
      if (code === 0x7f || code === 0x08) {
        flushText();
        events.push({ type: 'key', name: 'backspace' });
        i++;
        continue;
      }
      if (code === 0x00) {
        flushText();
        events.push({ type: 'key', name: 'space', ctrl: true });
        i++;
        continue;
      }
      if (code < 0x20) {
        flushText();
        events.push({ type: 'ctrl', letter: String.fromCharCode(code + 0x60) });
        i++;
        continue;
      }
      text += ch;
      i++;
    }
    flushText();
    return events;
  }

  private escape(input: string, i: number): { event?: InputEvent; next: number } | 'incomplete' {
    const next = input[i + 1];
    if (next === undefined) return { event: { type: 'key', name: 'escape' }, next: i + 1 };
    if (next === '[') {
      // CSI: parameters 0x30-0x3F, intermediates 0x20-0x2F, final 0x40-0x7E.
      let j = i + 2;
      while (j < input.length && /[0-?]/.test(input[j] as string)) j++;
      while (j < input.length && /[ -/]/.test(input[j] as string)) j++;
      if (j >= input.length) return 'incomplete';
      const params = input.slice(i + 2, j);
      const final = input[j] as string;
      return { event: csiEvent(params, final), next: j + 1 };
    }
    if (next === 'O') {
      const final = input[i + 2];
      if (final === undefined) return 'incomplete';
      const name = CSI_KEYS[final];
      return { event: name ? { type: 'key', name } : undefined, next: i + 3 } as { event?: InputEvent; next: number };
    }
    if (next === '\x1b') return { event: { type: 'key', name: 'escape' }, next: i + 1 };
    if (next === '\x7f' || next === '\x08') return { event: { type: 'key', name: 'backspace', alt: true }, next: i + 2 };
    if (next === '\r') return { event: { type: 'key', name: 'enter', alt: true }, next: i + 2 };
    const cp = input.codePointAt(i + 1) as number;
    const ch = String.fromCodePoint(cp);
    return { event: { type: 'alt', text: ch }, next: i + 1 + ch.length };
  }
}

function csiEvent(params: string, final: string): InputEvent | undefined {
  if (params.startsWith('<') && (final === 'M' || final === 'm')) {
    // SGR mouse: button;x;y. 64/65 are the wheel.
    const button = Number(params.slice(1).split(';')[0]);
    if ((button & 0x43) === 64) return { type: 'wheel', direction: 'up' };
    if ((button & 0x43) === 65) return { type: 'wheel', direction: 'down' };
    return undefined;
  }
  const parts = params.split(';');
  if (final === '~') {
    const name = TILDE_KEYS[parts[0] ?? ''];
    if (parts[0] === '13' || parts[0] === '27') return undefined;
    return name ? { type: 'key', name, ...modifiers(parts[1]) } : undefined;
  }
  if (final === 'u') {
    // CSI u (kitty / fixterms): codepoint;modifiers.
    const cp = Number(parts[0]);
    const mods = modifiers(parts[1]);
    if (cp === 13) return { type: 'key', name: 'enter', ...mods };
    if (cp === 9) return { type: 'key', name: mods.shift ? 'backtab' : 'tab' };
    if (cp === 27) return { type: 'key', name: 'escape' };
    if (cp === 127) return { type: 'key', name: 'backspace', ...mods };
    if (mods.ctrl && cp >= 97 && cp <= 122) return { type: 'ctrl', letter: String.fromCharCode(cp) };
    return Number.isFinite(cp) ? { type: 'text', text: String.fromCodePoint(cp) } : undefined;
  }
  const name = CSI_KEYS[final];
  if (!name) return undefined;
  return { type: 'key', name, ...modifiers(parts[1]) };
}

/** Printable text with a line break that is not only at its end: a paste without markers. */
function isPasteBurst(input: string): boolean {
  const inner = input.replace(/[\r\n]+$/, '');
  if (!/[\r\n]/.test(inner)) return false;
  return /^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f]*$/.test(inner) && /[^\s]/.test(inner);
}

/** Length of the longest suffix of `text` that is a prefix of `marker`. */
function partialSuffix(text: string, marker: string): number {
  for (let n = Math.min(marker.length - 1, text.length); n > 0; n--) {
    if (marker.startsWith(text.slice(text.length - n))) return n;
  }
  return 0;
}

const KEY_BYTES: Partial<Record<KeyName, string>> = {
  enter: '\r',
  tab: '\t',
  backtab: '\x1b[Z',
  backspace: '\x7f',
  delete: '\x1b[3~',
  escape: '\x1b',
  up: '\x1b[A',
  down: '\x1b[B',
  right: '\x1b[C',
  left: '\x1b[D',
  home: '\x1b[H',
  end: '\x1b[F',
  pageup: '\x1b[5~',
  pagedown: '\x1b[6~',
  insert: '\x1b[2~',
  space: ' ',
  f1: '\x1bOP',
};

/**
 * Decoded events back to terminal bytes (modifiers dropped): keys that were read but not yet
 * handled when the frame steps aside go to whoever reads the terminal next (`/login`).
 */
export function encodeInput(events: readonly InputEvent[]): string {
  let out = '';
  for (const event of events) {
    if (event.type === 'text') out += event.text;
    else if (event.type === 'paste') out += `${PASTE_START}${event.text}${PASTE_END}`;
    else if (event.type === 'ctrl') out += String.fromCharCode(event.letter.charCodeAt(0) - 0x60);
    else if (event.type === 'alt') out += `\x1b${event.text}`;
    else if (event.type === 'key') out += event.name === 'space' && event.ctrl ? '\x00' : (KEY_BYTES[event.name] ?? '');
  }
  return out;
}
