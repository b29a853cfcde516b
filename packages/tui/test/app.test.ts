import { afterEach, describe, expect, it, vi } from 'vitest';
import { TerminalApp } from '../src/app.js';
import { AssistantEntry, NoteEntry, type TranscriptEntry } from '../src/entries.js';
import { arrayRows } from '../src/rows.js';
import type { PasteImageResult } from '../src/intents.js';
import type { ApprovalView } from '../src/view-model.js';
import { RecordingIntents, STATUS, testApp } from './helpers.js';

const apps: { app: { stop(): void } }[] = [];
afterEach(() => {
  for (const a of apps.splice(0)) a.app.stop();
});

function started(options: Parameters<typeof testApp>[0] = {}) {
  const t = testApp(options);
  t.app.start();
  apps.push(t);
  return t;
}

const composerRow = (rows: string[]): string => rows.at(-1) as string;

describe('TerminalApp keys', () => {
  it('TUI-6 Enter submits the composer text and clears it; empty Enter is submitted too (QUEUE-4, QUEUE-5)', async () => {
    const t = started();
    await t.keys('hello');
    expect(composerRow(t.frame())).toBe('Work › hello');
    await t.keys('\r');
    await t.keys('\r');
    expect(t.intents.named('submit')).toEqual([
      ['submit', 'hello', []],
      ['submit', '', []],
    ]);
    expect(composerRow(t.frame())).toContain('Type a message');
  });

  it('TUI-6 TUIX-2 Ctrl+J and backslash-Enter insert newlines; only Shift+Tab toggles Plan/Work, Tab never does', async () => {
    const t = started();
    await t.keys('a\x0ab\\');
    await t.keys('\r');
    await t.keys('c');
    expect(t.app.composer.text).toBe('a\nb\nc');
    await t.keys('\t\x1b[Z');
    expect(t.intents.named('togglePlan')).toHaveLength(1);
    expect(t.intents.named('submit')).toHaveLength(0);
  });

  it('TUI-6 TUIX-2 (issue 22) the empty composer, painted once, follows the mode; its cursor sits after the prompt', async () => {
    const t = started();
    const cursor = () => t.app.compose(t.size.cols, t.size.rows, Date.now()).cursor;
    expect(composerRow(t.frame())).toBe('Work › Type a message, / for commands');
    expect(cursor()).toEqual({ row: t.size.rows - 1, col: 'Work › '.length });
    t.app.setStatus({ ...STATUS, mode: 'plan' });
    expect(composerRow(t.frame())).toBe('Plan › Type a message, / for commands');
    await t.keys('x');
    expect(composerRow(t.frame())).toBe('Plan › x');
    expect(cursor()).toEqual({ row: t.size.rows - 1, col: 'Plan › x'.length });
    await t.keys('\x7f');
    expect(composerRow(t.frame())).toBe('Plan › Type a message, / for commands');
    t.app.setStatus(STATUS);
    expect(composerRow(t.frame())).toBe('Work › Type a message, / for commands');
  });

  it('QUEUE-13 Ctrl+C: the host decides; clear-composer clears, exit-armed shows the hint', async () => {
    const t = started();
    await t.keys('draft');
    await t.keys('\x03');
    expect(t.intents.named('ctrlC')).toEqual([['ctrlC', false]]);
    expect(t.app.composer.isEmpty).toBe(true);
    t.intents.ctrlCResult = 'exit-armed';
    await t.keys('\x03');
    expect(t.intents.named('ctrlC').at(-1)).toEqual(['ctrlC', true]);
    expect(t.frame().join('\n')).toContain('Press Ctrl+C again to exit.');
  });

  it('QUEUE-12 Ctrl+C during a turn keeps the composer text (interrupted)', async () => {
    const intents = new RecordingIntents();
    intents.ctrlCResult = 'interrupted';
    const t = started({ intents });
    await t.keys('keep me');
    await t.keys('\x03');
    expect(t.app.composer.text).toBe('keep me');
  });

  it('IMG-21 keys wait for a Ctrl+V paste to attach: the Enter after it submits the marker', async () => {
    const intents = new RecordingIntents();
    let release: (r: PasteImageResult) => void = () => undefined;
    intents.paste = () => new Promise((r) => (release = r));
    const t = started({ intents });
    t.app.input('see \x16\r');
    await new Promise((r) => setTimeout(r, 20));
    expect(intents.named('submit')).toHaveLength(0);
    release({ number: 4 });
    await t.app.settled();
    expect(intents.named('submit')).toEqual([['submit', 'see [Image #4]', [{ start: 4, number: 4 }]]]);
  });

  it('CLIP-6 a failed paste shows the reader error on the status line and inserts nothing', async () => {
    const intents = new RecordingIntents();
    intents.paste = async () => ({ error: 'The clipboard holds no image. Copy a PNG, JPEG, GIF or WebP image and paste again.' });
    const t = started({ intents });
    await t.keys('\x16');
    expect(t.frame().join('\n')).toContain('The clipboard holds no image.');
    expect(t.app.composer.isEmpty).toBe(true);
  });

  it('TUI-6 Up recalls history on the first row, Down past the newest restores the draft', async () => {
    const t = started();
    t.app.setHistory(['older', 'newer']);
    await t.keys('draft');
    await t.keys('\x1b[A');
    expect(t.app.composer.text).toBe('newer');
    await t.keys('\x1b[A');
    expect(t.app.composer.text).toBe('older');
    await t.keys('\x1b[B\x1b[B');
    expect(t.app.composer.text).toBe('draft');
  });

  it('TUI-5 the picker opens on /, Tab completes, Enter accepts a partial match and then submits', async () => {
    const t = started({
      commands: [
        { name: 'help', aliases: ['h'], usage: '/help', summary: 'Shortcuts and commands.' },
        {
          name: 'approval',
          aliases: [],
          usage: '/approval [mode]',
          summary: 'Approval mode.',
          complete: () => ['default', 'edit', 'full'],
        },
      ],
    });
    await t.keys('/he');
    expect(t.frame().join('\n')).toContain('(/h) Shortcuts and commands.');
    await t.keys('\r');
    expect(t.app.composer.text).toBe('/help');
    await t.keys('\r');
    expect(t.intents.named('submit')).toEqual([['submit', '/help', []]]);
    await t.keys('/appr\t');
    expect(t.app.composer.text).toBe('/approval ');
    expect(t.frame().join('\n')).toContain('edit');
    await t.keys('e\t');
    expect(t.app.composer.text).toBe('/approval edit');
  });

  it('APPR-2 approval keys: Y/S/A/N, 1-4, Enter is Once and Escape is Deny; other keys do nothing', async () => {
    const card: ApprovalView = {
      id: 9,
      tool: 'write',
      risk: 'Write',
      authority: 'Workspace',
      summary: 'Write a file',
      subject: 'a.txt',
      preview: ['+hello'],
      choices: ['once', 'session', 'always', 'deny'],
    };
    const t = started();
    t.app.setApproval(card);
    const frame = t.frame().join('\n');
    expect(frame).toContain('Approve Write?');
    expect(frame).toMatch(/\[Y\] Once\s+\[S\] Session\s+\[A\] Always\s+\[N\] Deny/);
    expect(frame).toContain('+hello');
    for (const key of ['y', 's', 'a', 'n', '1', '2', '3', '4', '\r', '\x1b', 'q']) await t.keys(key);
    expect(t.intents.named('approval').map((c) => c[2])).toEqual([
      'once',
      'session',
      'always',
      'deny',
      'once',
      'session',
      'always',
      'deny',
      'once',
      'deny',
    ]);
    expect(t.app.composer.isEmpty).toBe(true);
  });

  it('BTW-9 BTW-10 panel keys: Left/Right browse, i inserts, x clears, Esc/Enter/Space close, Ctrl+C cancels', async () => {
    const t = started();
    const entries = [
      { question: 'q1', answer: 'answer one', state: 'done' as const },
      { question: 'q2', answer: 'answer two', state: 'done' as const },
    ];
    t.app.setSide(entries, true);
    expect(t.frame().join('\n')).toContain('answer two');
    await t.keys('\x1b[D');
    expect(t.frame().join('\n')).toContain('answer one');
    await t.keys('i');
    expect(t.app.composer.text).toBe('answer one');
    expect(t.app.sidePanelOpen).toBe(false);
    for (const close of ['\x1b', '\r', ' ']) {
      t.app.setSide(entries, true);
      await t.keys(close);
      expect(t.app.sidePanelOpen).toBe(false);
    }
    t.app.setSide(entries, true);
    await t.keys('x');
    expect(t.intents.named('clearSide')).toHaveLength(1);
    t.app.setSide([{ question: 'q3', answer: '', state: 'waiting' }], true);
    expect(t.frame().join('\n')).toContain('Waiting for the model');
    await t.keys('\x03');
    expect(t.intents.named('cancelSide')).toHaveLength(1);
    expect(t.intents.named('ctrlC')).toHaveLength(0);
    expect(t.app.sidePanelOpen).toBe(false);
  });

  it('BTW-7 the panel sits above the composer; status bar and transcript stay', () => {
    const t = started();
    t.app.transcript.push(new NoteEntry('transcript line'));
    t.app.setSide([{ question: 'why?', answer: 'because', state: 'done' }], true);
    const rows = t.frame();
    const panel = rows.findIndex((r) => r.includes('because'));
    const status = rows.findIndex((r) => r.includes('fake/fake-model'));
    expect(rows[0]).toContain('transcript line');
    expect(panel).toBeGreaterThan(0);
    expect(panel).toBeLessThan(status);
    expect(status).toBe(rows.length - 2);
  });

  it('TUI-1 TUIX-9 below 40x10 a centred notice replaces the frame and typed keys are kept for later', async () => {
    const t = started({ cols: 39, rows: 9 });
    const rows = t.frame();
    const row = rows.findIndex((r) => r.includes('Crystal Code needs a larger window'));
    expect(row).toBeGreaterThan(1);
    expect(rows.join('\n')).not.toContain('fake/fake-model');
    await t.keys('typed');
    expect(t.app.composer.isEmpty).toBe(true);
    t.size.cols = 40;
    t.size.rows = 10;
    t.app.resize();
    await t.app.settled();
    expect(t.app.composer.text).toBe('typed');
    expect(t.frame().join('\n')).toContain('fake/fake-model');
  });

  it('TUI-4 COMPACT-5 a timer runs only while something is in progress; none when idle', async () => {
    const t = started();
    await new Promise((r) => setTimeout(r, 100));
    expect(t.app.timersActive).toBe(false);
    t.app.setProgress({ kind: 'compacting', since: Date.now() });
    await new Promise((r) => setTimeout(r, 250));
    expect(t.app.timersActive).toBe(true);
    const frames = t.app.frames;
    await new Promise((r) => setTimeout(r, 250));
    expect(t.app.frames).toBeGreaterThan(frames);
    t.app.setProgress(undefined);
    await new Promise((r) => setTimeout(r, 60));
    expect(t.app.timersActive).toBe(false);
  });
});

describe('frames while a reply streams (issue 22)', () => {
  it('TUI-4 text read every 34 ms is painted at once, one frame per read: the spinner adds no frame, no wake-up of its own, and no frame waits on a timer', async () => {
    // The Markdown lexer loads (and re-lays out the transcript) before the clock is faked, so its
    // frame cannot land inside the counted second.
    const t = started({ now: () => Date.now() });
    await t.app.loadMarkdown();
    await t.app.painted();
    vi.useFakeTimers();
    try {
      t.app.setProgress({ kind: 'writing', since: Date.now() });
      const live = new AssistantEntry();
      t.app.transcript.push(live);
      t.app.requestFrame();
      vi.advanceTimersByTime(200);
      // The spinner's timer callbacks, counted (each one a wake-up of the process).
      const app = t.app as unknown as { tick: () => void };
      const step = app.tick;
      let ticks = 0;
      app.tick = () => {
        ticks++;
        step.call(t.app);
      };
      vi.advanceTimersByTime(200);
      const ticksBefore = ticks;
      const before = t.app.frames;
      // One second of a paced reply as the transport hands it on: a read every 34 ms (the 33 ms
      // read window and the read itself), each a few tokens.
      for (let read = 1; read <= 30; read++) {
        live.append('tok tok tok tok ');
        t.app.requestFrame();
        vi.advanceTimersByTime(0); // the immediates of this turn of the event loop
        expect(t.app.frames - before).toBe(read);
        vi.advanceTimersByTime(34);
      }
      // A second of spinner steps went by, each already on screen with the text: its timer never fired.
      expect(t.app.frames - before).toBe(30);
      expect(ticks - ticksBefore).toBe(0);
      // The text stops (a long tool call streaming, a stall): the spinner paints its own steps again.
      vi.advanceTimersByTime(500);
      expect(t.app.frames - before).toBeGreaterThanOrEqual(34);
      expect(ticks - ticksBefore).toBeGreaterThanOrEqual(4);
      expect(t.frame().join('\n')).toContain('Writing');
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('inline view memory (TUIX-8)', () => {
  it('TUIX-8 an entry printed to the scroll-back keeps no layout, so a long session does not hold every row it printed', () => {
    let written = '';
    const app = new TerminalApp({
      host: { write: (d) => (written += d), size: () => ({ cols: 80, rows: 24 }) },
      intents: new RecordingIntents(),
      status: STATUS,
      view: 'inline',
    });
    const laidOut: number[] = [];
    const dropped: number[] = [];
    const entry = (n: number): TranscriptEntry => ({
      rows: () => {
        laidOut.push(n);
        return arrayRows([`entry ${n}`]);
      },
      invalidate: () => dropped.push(n),
    });
    for (let n = 0; n < 50; n++) app.transcript.push(entry(n));
    app.start();
    expect(written).toContain('entry 49');
    expect(dropped).toEqual(Array.from({ length: 50 }, (_, n) => n));
    // Later frames never lay the printed entries out again.
    laidOut.length = 0;
    app.transcript.push(entry(50));
    app.render();
    expect(laidOut).toEqual([50]);
    app.stop();
  });
});
