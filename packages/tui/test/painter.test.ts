import { describe, expect, it } from 'vitest';
import { Painter } from '../src/painter.js';

function painter() {
  const writes: string[] = [];
  return { p: new Painter((d) => writes.push(d)), writes };
}

describe('Painter', () => {
  it('TUI-1 wraps every paint in synchronized output and rewrites only the rows that changed', () => {
    const { p, writes } = painter();
    p.paint({ rows: ['alpha', 'beta', 'gamma'] }, 80, 3);
    expect(p.last.rowsWritten).toBe(3);
    p.paint({ rows: ['alpha', 'BETA', 'gamma'] }, 80, 3);
    expect(p.last.rowsWritten).toBe(1);
    const second = writes.at(-1) as string;
    expect(second.startsWith('\x1b[?2026h')).toBe(true);
    expect(second.endsWith('\x1b[?2026l')).toBe(true);
    expect(second).toContain('\x1b[2;1HBETA');
    expect(second).not.toContain('alpha');
    expect(second).not.toContain('gamma');
  });

  it('TUI-1 an unchanged frame writes nothing at all', () => {
    const { p, writes } = painter();
    p.paint({ rows: ['same'], cursor: { row: 0, col: 2 } }, 80, 1);
    const count = writes.length;
    p.paint({ rows: ['same'], cursor: { row: 0, col: 2 } }, 80, 1);
    expect(writes.length).toBe(count);
  });

  it('TUI-1 a size change clears and repaints every row', () => {
    const { p, writes } = painter();
    p.paint({ rows: ['a', 'b'] }, 80, 2);
    p.paint({ rows: ['a', 'b'] }, 90, 2);
    expect(p.last.rowsWritten).toBe(2);
    expect(writes.at(-1)).toContain('\x1b[2J');
  });

  it('enters and leaves the alternate screen with bracketed paste and wheel reporting', () => {
    const { p, writes } = painter();
    p.enter('Crystal Code');
    expect(writes[0]).toContain('\x1b[?1049h');
    expect(writes[0]).toContain('\x1b[?2004h');
    expect(writes[0]).toContain('\x1b[?1000h\x1b[?1006h');
    expect(writes[0]).toContain('\x1b]0;Crystal Code\x07');
    p.leave();
    expect(writes[1]).toContain('\x1b[?1049l');
    expect(writes[1]).toContain('\x1b[?2004l');
    expect(writes[1]).toContain('\x1b[?25h');
  });
});
