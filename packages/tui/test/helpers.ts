import { stripAnsi } from '../src/ansi.js';
import { type AppOptions, TerminalApp } from '../src/app.js';
import type { CtrlCResult, Intents, PasteImageResult } from '../src/intents.js';
import type { Rows } from '../src/rows.js';
import type { StatusView } from '../src/view-model.js';

export const STATUS: StatusView = {
  mode: 'work',
  approval: 'default',
  model: 'fake/fake-model',
  workspace: '/home/me/project',
  contextPercent: 12.4,
  inputTokens: 1234,
  outputTokens: 56,
  queued: 0,
};

export function plainRows(rows: Rows): string[] {
  const out: string[] = [];
  for (let i = 0; i < rows.count; i++) out.push(stripAnsi(rows.row(i)));
  return out;
}

/** Intents that record what the app asked for. */
export class RecordingIntents implements Intents {
  readonly calls: unknown[][] = [];
  ctrlCResult: CtrlCResult = 'clear-composer';
  paste: () => Promise<PasteImageResult> = async () => ({ number: 1 });

  submit(text: string, spans: readonly { start: number; number: number }[]): void {
    this.calls.push(['submit', text, spans]);
  }
  ctrlC(composerEmpty: boolean): CtrlCResult {
    this.calls.push(['ctrlC', composerEmpty]);
    return this.ctrlCResult;
  }
  togglePlan(): void {
    this.calls.push(['togglePlan']);
  }
  answerApproval(id: number, answer: string): void {
    this.calls.push(['approval', id, answer]);
  }
  answerQuestion(id: number, answers: unknown): void {
    this.calls.push(['question', id, answers]);
  }
  pasteImage(): Promise<PasteImageResult> {
    this.calls.push(['paste']);
    return this.paste();
  }
  cancelSide(): void {
    this.calls.push(['cancelSide']);
  }
  clearSideThread(): void {
    this.calls.push(['clearSide']);
  }
  named(name: string): unknown[][] {
    return this.calls.filter((c) => c[0] === name);
  }
}

/** A TerminalApp on a fake terminal: what it wrote, and its frames as plain text. */
export function testApp(options: Partial<AppOptions> & { cols?: number; rows?: number } = {}) {
  const size = { cols: options.cols ?? 100, rows: options.rows ?? 30 };
  let written = '';
  const intents = (options.intents as RecordingIntents | undefined) ?? new RecordingIntents();
  const app = new TerminalApp({
    host: { write: (d) => (written += d), size: () => size },
    intents,
    status: options.status ?? STATUS,
    commands: options.commands,
    now: options.now,
  });
  return {
    app,
    intents,
    size,
    get written() {
      return written;
    },
    clearWritten() {
      written = '';
    },
    /** The frame as plain rows (composed now). */
    frame(now = Date.now()): string[] {
      return app.compose(size.cols, size.rows, now).rows.map((r) => stripAnsi(r));
    },
    async keys(data: string): Promise<void> {
      app.input(data);
      await app.settled();
    },
  };
}
