import { readFile } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { stripAnsi } from '../src/ansi.js';
import { TerminalApp } from '../src/app.js';
import { RecordingIntents, STATUS } from './helpers.js';

/** An app painted before its host can act (issue 22: the terminal paints before the engine loads). */
function earlyApp() {
  let written = '';
  const app = new TerminalApp({
    host: { write: (d) => (written += d), size: () => ({ cols: 100, rows: 30 }) },
    status: STATUS,
    view: 'fullscreen',
    deferMarkdown: true,
  });
  app.start();
  return {
    app,
    get screen() {
      return stripAnsi(written);
    },
  };
}

describe('the app before its host is connected (issue 22)', () => {
  it('TUI-1 (issue 22) a key read is echoed in the same turn of the event loop, before any timer (a 0 ms timer waits 1 ms)', async () => {
    const t = earlyApp();
    await t.app.settled();
    // In an I/O callback, as a key read from stdin is: the check phase (setImmediate) comes next,
    // and timers only in the loop's next turn.
    const echoed = await new Promise<string>((resolve) => {
      readFile(fileURLToPath(import.meta.url), () => {
        const before = t.screen.length;
        t.app.input('q');
        setImmediate(() => resolve(t.screen.slice(before)));
      });
    });
    expect(echoed).toContain('q');
    t.app.stop();
  });

  it('TUI-6 composer edits apply at once; Enter and every key after it wait, in order, and Enter submits once on connect', async () => {
    const t = earlyApp();
    t.app.input('hello wx');
    t.app.input('\x7f'); // Backspace
    t.app.input('orld');
    t.app.input('\r');
    t.app.input('second');
    await t.app.settled();
    // Applied before the host: the text and the Backspace. Held: the Enter and what followed it.
    expect(t.app.composer.text).toBe('hello world');
    t.app.render();
    expect(t.screen).toContain('Starting the session');
    const intents = new RecordingIntents();
    t.app.connect(intents, []);
    await t.app.settled();
    expect(intents.named('submit')).toEqual([['submit', 'hello world', []]]);
    expect(t.app.composer.text).toBe('second');
    t.app.stop();
  });

  it('QUEUE-13 TUIX-2 Ctrl+C and Shift+Tab before the host wait for it and then keep their rules', async () => {
    const t = earlyApp();
    t.app.input('draft\x03');
    t.app.input('\x1b[Z');
    await t.app.settled();
    expect(t.app.composer.text).toBe('draft');
    const intents = new RecordingIntents();
    t.app.connect(intents, []);
    await t.app.settled();
    // The host decided: Ctrl+C on a non-empty composer, then Shift+Tab toggled the mode.
    expect(intents.calls.map((c) => c[0])).toEqual(['ctrlC', 'togglePlan']);
    expect(intents.named('ctrlC')).toEqual([['ctrlC', false]]);
    expect(t.app.composer.text).toBe('');
    t.app.stop();
  });

  it('TUIX-1 TUIX-2 Esc typed before the host clears the draft once connected; Tab waits too', async () => {
    const t = earlyApp();
    t.app.input('abc');
    t.app.input('\x1b');
    t.app.input('x');
    t.app.input('\t');
    t.app.input('y');
    await t.app.settled();
    expect(t.app.composer.text).toBe('abc');
    const intents = new RecordingIntents();
    t.app.connect(intents, []);
    await t.app.settled();
    // Esc at an idle prompt cleared the composer; Tab completed nothing and changed no mode.
    expect(t.app.composer.text).toBe('xy');
    expect(intents.named('togglePlan')).toEqual([]);
    t.app.stop();
  });

  it('TUI-5 a slash typed before the host gets the host commands once connected', async () => {
    const t = earlyApp();
    t.app.input('/he');
    await t.app.settled();
    expect(t.app.composer.text).toBe('/he');
    t.app.connect(new RecordingIntents(), [{ name: 'help', aliases: [], usage: '/help', summary: 'Lists every key' }]);
    await t.app.settled();
    t.app.render();
    expect(t.screen).toContain('Lists every key');
    t.app.stop();
  });
});
