import { describe, expect, it } from 'vitest';
import { stripAnsi } from '../src/ansi.js';
import { formatElapsed, progressCaption, renderProgress, SPINNER } from '../src/progress.js';
import { formatTokens, renderStatusBar } from '../src/status-bar.js';
import { STATUS } from './helpers.js';

describe('progress row (TUI-4)', () => {
  it('TUI-4 captions in Title Case', () => {
    const kinds = ['waiting', 'thinking', 'writing', 'running', 'approval', 'compacting'] as const;
    expect(kinds.map((kind) => progressCaption({ kind, since: 0 }, 0))).toEqual([
      'Waiting For Model',
      'Thinking',
      'Writing',
      'Running Command',
      'Awaiting Approval',
      'Compacting',
    ]);
  });

  it('RETRY-4 the retry caption counts the remaining wait down from dueAt', () => {
    const view = { kind: 'retrying', since: 0, dueAt: 2500, attempt: 1 } as const;
    expect(progressCaption(view, 0)).toBe('Retrying In 3s (Attempt 1)');
    expect(progressCaption(view, 600)).toBe('Retrying In 2s (Attempt 1)');
    expect(progressCaption(view, 1600)).toBe('Retrying In 1s (Attempt 1)');
    expect(progressCaption(view, 3000)).toBe('Retrying In 0s (Attempt 1)');
  });

  it('TUI-4 a one-cell spinner, the caption and the elapsed time', () => {
    const row = stripAnsi(renderProgress({ kind: 'thinking', since: 1000 }, 77_000));
    expect(row).toMatch(/^. Thinking · 1m16s$/);
    expect(SPINNER).toContain(row[0]);
    expect(formatElapsed(5_400)).toBe('5s');
    expect(formatElapsed(138_000)).toBe('2m18s');
  });

  it('TUI-4 (issue 22) the row painted again within one spinner step still follows the glyph, the second and the caption', () => {
    const view = { kind: 'writing', since: 1050 } as const;
    // One spinner step (1,000-1,099 ms), across the elapsed second (since + 1,000 = 2,050).
    expect(stripAnsi(renderProgress(view, 2040))).toMatch(/ Writing · 0s$/);
    expect(stripAnsi(renderProgress(view, 2060))).toMatch(/ Writing · 1s$/);
    // The next spinner step, same second: the next glyph.
    const a = stripAnsi(renderProgress(view, 2099));
    const b = stripAnsi(renderProgress(view, 2100));
    expect(b[0]).not.toBe(a[0]);
    expect(b.slice(1)).toBe(a.slice(1));
    // Another view at the same moment: its own caption.
    expect(stripAnsi(renderProgress({ kind: 'thinking', since: 1050 }, 2100))).toMatch(/ Thinking · 1s$/);
    // The retry countdown changes within a second of the view's own clock.
    const retry = { kind: 'retrying', since: 0, dueAt: 2550, attempt: 1 } as const;
    expect(stripAnsi(renderProgress(retry, 1540))).toContain('Retrying In 2s');
    expect(stripAnsi(renderProgress(retry, 1560))).toContain('Retrying In 1s');
  });
});

describe('status bar (TUI-3)', () => {
  it('TUI-3 mode, approval, model, workspace, CTX, IN/OUT and the queued count', () => {
    const row = stripAnsi(renderStatusBar({ ...STATUS, queued: 2 }, 120, '/home/me'));
    expect(row).toMatch(/^ Work │ Default │ fake\/fake-model │ ~\/project │ CTX 12% │ IN 1.2k │ OUT 56 │ 2 Queued\s+$/);
    expect(row.length).toBe(119);
  });

  it('TUI-3 shortens the workspace first when the row is narrow', () => {
    const row = stripAnsi(renderStatusBar({ ...STATUS, workspace: '/a/very/long/path/to/the/workspace/folder' }, 80));
    expect(row).toContain('CTX 12% │ IN 1.2k │ OUT 56');
    expect(row).toContain('…');
    expect(row.length).toBeLessThanOrEqual(79);
  });

  it('formats token counts', () => {
    expect([950, 1234, 34_000, 1_500_000].map(formatTokens)).toEqual(['950', '1.2k', '34k', '1.5M']);
  });
});
