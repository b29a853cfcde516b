// Its own file: the lexer's "lexed yet" state belongs to the module, so no other test may lex first.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WARM_AFTER_MS } from '../src/app.js';
import { AssistantEntry } from '../src/entries.js';
import { loadMarkdown, markdownWarm } from '../src/markdown.js';
import { testApp } from './helpers.js';

afterEach(() => vi.useRealTimers());

describe('the Markdown lexer is warmed while a request waits (issue 22)', () => {
  it('TUI-2 a new session pays the lexer first use in the wait for the first token, not in the first reply frame', async () => {
    const t = testApp();
    t.app.start();
    await loadMarkdown();
    vi.useFakeTimers();
    try {
      expect(markdownWarm()).toBe(false);
      // A round whose first token comes quickly: nothing waits for long, so nothing is warmed by the timer.
      t.app.setProgress({ kind: 'waiting', since: Date.now() });
      vi.advanceTimersByTime(WARM_AFTER_MS / 2);
      t.app.setProgress({ kind: 'writing', since: Date.now() });
      vi.advanceTimersByTime(WARM_AFTER_MS);
      expect(markdownWarm()).toBe(false);
      // The next round waits: the lexer has run before any text comes.
      t.app.setProgress({ kind: 'waiting', since: Date.now() });
      vi.advanceTimersByTime(WARM_AFTER_MS - 1);
      expect(markdownWarm()).toBe(false);
      vi.advanceTimersByTime(1);
      expect(markdownWarm()).toBe(true);
      // Its rendering is unchanged by the warm-up: a reply still lays out as Markdown.
      t.app.transcript.push(AssistantEntry.of('# Title\n\nSome **bold** text.'));
      expect(t.frame().join('\n')).toContain('Title');
      expect(t.frame().join('\n')).not.toContain('**bold**');
    } finally {
      t.app.stop();
    }
  });
});
