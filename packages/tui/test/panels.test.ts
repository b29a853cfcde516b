import { describe, expect, it } from 'vitest';
import { stripAnsi } from '../src/ansi.js';
import type { InputEvent } from '../src/input-decoder.js';
import { QuestionState } from '../src/panels/question-overlay.js';
import { renderQueuePanel } from '../src/panels/queue-panel.js';
import { SlashPicker } from '../src/panels/slash-picker.js';

const key = (name: string): InputEvent => ({ type: 'key', name }) as InputEvent;
const text = (t: string): InputEvent => ({ type: 'text', text: t });

describe('question overlay', () => {
  const single = {
    id: 1,
    questions: [
      {
        header: 'Db',
        question: 'Which?',
        options: [
          { label: 'pg', description: 'Postgres' },
          { label: 'lite', description: '' },
        ],
        multiple: false,
        custom: true,
      },
    ],
  };

  it('a single single-select question answers on Enter', () => {
    const q = new QuestionState(single);
    q.key(key('down'));
    expect(q.key(key('enter'))).toEqual({ answers: [['lite']] });
  });

  it('a custom answer is typed in its own buffer; Escape cancels the edit, Enter saves', () => {
    const q = new QuestionState(single);
    q.key(text('3'));
    expect(q.isEditing).toBe(true);
    q.key(text('mysql'));
    expect(q.key(key('enter'))).toEqual({ answers: [['mysql']] });
  });

  it('multiple questions and multi-select use Confirm; Escape dismisses', () => {
    const q = new QuestionState({
      id: 2,
      questions: [
        {
          header: 'A',
          question: 'Pick some',
          options: [
            { label: 'x', description: '' },
            { label: 'y', description: '' },
          ],
          multiple: true,
          custom: false,
        },
        { header: 'B', question: 'One', options: [{ label: 'z', description: '' }], multiple: false, custom: false },
      ],
    });
    q.key(text(' '));
    q.key(key('down'));
    q.key(text(' '));
    q.key(key('right'));
    expect(q.key(key('enter'))).toBeUndefined();
    expect(stripAnsi(q.render(80, 20).join('\n'))).toContain('Press Enter to send these answers.');
    expect(q.key(key('enter'))).toEqual({ answers: [['x', 'y'], ['z']] });
    expect(new QuestionState(single).key(key('escape'))).toBe('dismissed');
  });
});

describe('slash picker (TUI-5)', () => {
  const commands = [
    { name: 'status', aliases: [], usage: '/status', summary: 'State.' },
    { name: 'sessions', aliases: [], usage: '/sessions [all]', summary: 'List.', complete: () => ['all'] },
    { name: 'btw', aliases: ['side'], usage: '/btw <question>', summary: 'Side question.' },
    { name: 'resume', aliases: ['continue'], usage: '/resume [id]', summary: 'Resume.', complete: async () => ['s-1', 's-2'] },
  ];

  it('TUI-5 matches names and aliases by prefix', () => {
    const p = new SlashPicker(commands);
    p.update('/s');
    expect(p.items.map((i) => i.insert)).toEqual(['/status', '/sessions ', '/btw ']);
  });

  it('TUI-5 completes arguments, also when they arrive asynchronously', async () => {
    const p = new SlashPicker(commands);
    p.update('/sessions ');
    expect(p.items.map((i) => i.insert)).toEqual(['/sessions all']);
    let changed = false;
    p.onChange = () => (changed = true);
    p.update('/resume s');
    expect(p.items).toEqual([]);
    await new Promise((r) => setTimeout(r, 0));
    expect(changed).toBe(true);
    expect(p.items.map((i) => i.insert)).toEqual(['/resume s-1', '/resume s-2']);
  });

  it('TUI-5 Enter accepts a partial match but submits an exact command', () => {
    const p = new SlashPicker(commands);
    p.update('/sta');
    expect(p.acceptsOnEnter('/sta')).toBe(true);
    p.update('/status');
    expect(p.acceptsOnEnter('/status')).toBe(false);
    p.update('/side');
    expect(p.acceptsOnEnter('/side')).toBe(false);
  });
});

describe('queue panel (QUEUE-2)', () => {
  it('QUEUE-2 lists queued follow-ups and commands above the composer', () => {
    const rows = renderQueuePanel(
      [
        { kind: 'message', text: 'first\nsecond line' },
        { kind: 'command', text: '/clear' },
      ],
      80,
    ).map(stripAnsi);
    expect(rows[0]).toMatch(/^Queued \(2\)/);
    expect(rows[1]).toBe(' 1. first ⏎ second line');
    expect(rows[2]).toBe(' 2. /clear');
  });
});
