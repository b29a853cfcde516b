import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { runCrystal } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { PtySession, type Scenario, scenario } from './pty-harness.js';

let current: Scenario | undefined;
afterEach(async () => {
  await current?.dispose();
  current = undefined;
});

const MARKDOWN =
  '# Plan Of Work\n\nThis is **very bold** and `inline code`.\n\n- first item\n- second item\n\n```ts\nconst answer = 42;\n```\n';

describe('crystal (interactive) in a terminal', () => {
  it('TUI-1 TUI-2 TUI-3 TUIX-8 --fullscreen: a typed prompt streams back as Markdown under a status bar', async () => {
    current = await scenario({
      args: ['--fullscreen'],
      replies: [{ text: MARKDOWN, usage: { input: 1200, output: 340 }, delayMs: 5 }],
    });
    const { session } = current;
    await session.waitFor('Type a message');
    // TUI-3: mode, approval mode, model, workspace, CTX, IN/OUT. The frame painted before the
    // session opened (issue 22) shows CTX as unknown until the session knows the window.
    await session.waitFor(/Work │ Default │ fake\/fake-model │ .*crystal-ws-.* │ CTX 0% │ IN 0 │ OUT 0/);
    await session.type('explain the plan');
    session.write('\r');
    await session.waitFor('const answer = 42;');
    const screen = await session.waitFor('IN 1.2k │ OUT 340');
    expect(screen).toContain('▌ explain the plan');
    // TUI-2: heading without its marker, bold without asterisks, bullets, fenced code with a gutter.
    expect(screen).toContain('Plan Of Work');
    expect(screen).not.toContain('# Plan Of Work');
    expect(screen).toContain('This is very bold and inline code.');
    expect(screen).toContain('• first item');
    expect(screen).toContain('│ const answer = 42;');
    const bold = session.find('very bold') as { row: number; col: number };
    expect(session.isBold(bold.row, bold.col)).toBe(true);
    const plain = session.find('This is') as { row: number; col: number };
    expect(session.isBold(plain.row, plain.col)).toBe(false);
    // TUI-1: the frame is painted in synchronized updates on the alternate screen.
    expect(session.output).toContain('\x1b[?1049h');
    expect(session.output).toContain('\x1b[?2026h');
  });

  it('QUEUE-13 CLI-1 Ctrl+C clears the composer at idle, twice on an empty one exits with the resume hint', async () => {
    current = await scenario({ replies: [{ text: 'Noted.' }] });
    const { session, home } = current;
    await session.waitFor('Type a message');
    await session.type('hello');
    session.write('\r');
    await session.waitFor('Noted.');
    await session.waitIdle();
    await session.type('draft text');
    await session.waitFor('Work › draft text');
    session.write('\x03');
    await session.waitFor('Type a message');
    session.write('\x03');
    await session.waitFor('Press Ctrl+C again to exit.');
    session.write('\x03');
    const exit = await session.exited;
    expect(exit.exitCode).toBe(0);
    // After the alternate screen: the session id and how to resume it.
    const match = /Session (\S+) saved\. Continue it with: crystal --resume (\S+)/.exec(session.output);
    expect(match?.[1]).toBe(match?.[2]);
    expect(session.output.lastIndexOf('\x1b[?1049l')).toBeLessThan(session.output.indexOf('Continue it with'));
    expect(existsSync(join(home.path, 'sessions', `${match?.[1]}.json`))).toBe(true);
  });

  it('TUI-6 TUIX-2 Shift+Tab toggles Plan and Work; Up recalls the previous prompt; Ctrl+J adds a line', async () => {
    current = await scenario({ replies: [{ text: 'one' }, { text: 'two' }] });
    const { session } = current;
    await session.waitFor('Type a message');
    session.write('\x1b[Z');
    await session.waitFor(/Plan │ Default/);
    expect(session.screen()).toContain('Plan › ');
    session.write('\x1b[Z');
    await session.waitFor(/Work │ Default/);
    await session.type('first prompt');
    session.write('\r');
    await session.waitFor('one');
    await session.waitIdle();
    session.write('\x1b[A');
    await session.waitFor('Work › first prompt');
    session.write('\x0a');
    await session.type('second line');
    const screen = await session.waitFor(/Work › first prompt\n\s+second line/);
    expect(screen).toMatch(/Work › first prompt\n\s+second line/);
  });

  it('TUI-6 prompt history is kept per workspace across sessions', async () => {
    current = await scenario({ replies: [{ text: 'First.' }] });
    const { session, home, workspace } = current;
    await session.waitFor('Type a message');
    await session.type('remember this prompt');
    session.write('\r');
    await session.waitFor('First.');
    await session.waitIdle();
    session.write('\x03\x03');
    await session.exited;
    const again = PtySession.start({ home: home.path, cwd: workspace });
    try {
      await again.waitFor('Type a message');
      again.write('\x1b[A');
      await again.waitFor('Work › remember this prompt');
    } finally {
      again.kill();
      await again.exited;
    }
  });

  it('TUI-5 the slash picker lists commands, Tab completes, Enter runs /help', async () => {
    current = await scenario({ replies: [] });
    const { session } = current;
    await session.waitFor('Type a message');
    await session.type('/he');
    await session.waitFor('Shortcuts and commands.');
    session.write('\t');
    await session.waitFor('Work › /help');
    session.write('\r');
    const screen = await session.waitFor('Commands:');
    expect(screen).toContain('/btw <question>');
    await session.type('/appr');
    session.write('\r');
    await session.waitFor('Work › /approval');
    await session.waitFor('edit');
    await session.type('e');
    session.write('\t');
    await session.waitFor('Work › /approval edit');
    session.write('\r');
    await session.waitFor(/Work │ Edit │/);
  });

  it('TUI-6 TUIX-8 --fullscreen: PageUp scrolls the transcript back and PageDown follows the bottom again', async () => {
    const long = Array.from({ length: 80 }, (_, i) => `line number ${i + 1}`).join('\n\n');
    current = await scenario({ args: ['--fullscreen'], replies: [{ text: long }] });
    const { session } = current;
    await session.waitFor('Type a message');
    await session.type('long please');
    session.write('\r');
    await session.waitFor('line number 80');
    session.write('\x1b[5~');
    await session.waitFor('more below');
    expect(session.screen()).not.toContain('line number 80');
    session.write('\x1b[<65;10;10M'.repeat(40));
    await session.waitFor('line number 80');
    expect(session.screen()).not.toContain('more below');
  });
});

describe('crystal (interactive) without a terminal', () => {
  it('TUI-7 piped output falls back to sequential plain text', async () => {
    current = await scenario({ replies: [{ text: 'Plain **answer** here.' }] });
    current.session.kill();
    const result = await runCrystal([], { home: current.home.path, cwd: current.workspace, input: 'hi there\n' });
    expect(result.code).toBe(0);
    expect(result.stdout).not.toContain('\x1b');
    expect(result.stdout).toMatch(
      /^> hi there\nPlain \*\*answer\*\* here\.\nSession (\S+) saved\. Continue it with: crystal --resume \1\n$/,
    );
  });

  it('CLI-1 a missing session exits non-zero with a clear message before the terminal UI starts', async () => {
    current = await scenario({ replies: [], args: ['--resume', 'no-such-session'] });
    const exit = await current.session.exited;
    expect(exit.exitCode).toBe(1);
    expect(current.session.output).toContain("No saved session 'no-such-session'");
    expect(current.session.output).not.toContain('\x1b[?1049h');
  });

  it('CLI-1 --continue with no session in the workspace exits non-zero', async () => {
    current = await scenario({ replies: [], args: ['--continue'] });
    const exit = await current.session.exited;
    expect(exit.exitCode).toBe(1);
    expect(current.session.output).toContain('No saved session in workspace');
  });

  it('CLI-1 -r ID resumes a saved session and shows its transcript', async () => {
    current = await scenario({ replies: [{ text: 'The first answer.' }] });
    current.session.kill();
    const first = await runCrystal(['run', 'remember this'], { home: current.home.path, cwd: current.workspace });
    expect(first.code).toBe(0);
    const id = readdirSync(join(current.home.path, 'sessions'))
      .find((f) => f.endsWith('.json'))
      ?.replace(/\.json$/, '');
    const resumed = PtySession.start({ home: current.home.path, cwd: current.workspace, args: ['-r', id as string] });
    try {
      const screen = await resumed.waitFor('The first answer.');
      expect(screen).toContain('▌ remember this');
    } finally {
      resumed.kill();
      await resumed.exited;
    }
  });
});
