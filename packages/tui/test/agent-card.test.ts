import { describe, expect, it } from 'vitest';
import { AgentEntry } from '../src/agent-card.js';
import { plainRows } from './helpers.js';

const card = (now: () => number = () => 5_000) =>
  new AgentEntry(
    { path: 'main/explore#2', profile: 'explore', description: 'find the parser', model: 'fake/cheap', transcript: '/h/x.json' },
    now,
  );

describe('AgentEntry (AGENT-4)', () => {
  it('AGENT-4 a running child shows its head, its last three steps and its own progress row', () => {
    let t = 1_000;
    const entry = card(() => t);
    entry.roundStarted();
    for (const [i, path] of ['a.ts', 'b.ts', 'c.ts', 'd.ts'].entries()) entry.addStep(`c${i}`, 'read', path);
    entry.finishStep('c0', 'done');
    entry.finishStep('c3', 'failed');
    t = 4_500;
    const rows = plainRows(entry.rows(80));
    expect(rows[0]).toBe('● Agent main/explore#2 find the parser');
    expect(rows[1]).toBe('  │ explore · fake/cheap');
    expect(rows[2]).toBe('  │ … 1 earlier step');
    expect(rows.slice(3, 6)).toEqual(['  │ ● Read b.ts', '  │ ● Read c.ts', '  │ ● Read d.ts']);
    expect(rows[6]).toMatch(/^ {2}│ \S Running Command · 3s · 1 model call · 4 tool calls$/);
    expect(entry.running).toBe(true);
  });

  it('AGENT-4 a finished child shows how it stopped and its answer; expanded, every step and the transcript', () => {
    const entry = card();
    entry.addStep('c1', 'grep', 'parse');
    entry.denyRunning('grep');
    entry.finish('completed', 'line 1\nline 2\nline 3\nline 4', 2, 1);
    const collapsed = plainRows(entry.rows(80));
    expect(collapsed).toContain('  │ ● Grep parse  Denied');
    expect(collapsed).toContain('  │ Done · 2 model calls · 1 tool call');
    expect(collapsed).toContain('  │ … 1 more lines · Ctrl+O expands');
    expect(collapsed.join('\n')).not.toContain('line 4');
    expect(entry.expandable).toBe(true);
    entry.setExpanded(true);
    const open = plainRows(entry.rows(80));
    expect(open).toContain('  │ line 4');
    expect(open).toContain('  │ Transcript: /h/x.json');
    expect(open.at(-1)).toBe('  │ Ctrl+O collapses');
    expect(plainRows(entry.expandedCopy().rows(80))).toEqual(open);
  });

  it('AGENT-4 a stopped child names the stop reason', () => {
    const entry = card();
    entry.finish('model_call_limit_reached', '', 3, 0);
    expect(plainRows(entry.rows(100))).toContain('  │ Stopped: model_call_limit_reached · 3 model calls · 0 tool calls');
  });
});
