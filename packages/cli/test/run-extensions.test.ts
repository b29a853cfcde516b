import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { FakeProvider, type FakeReply, fakeConfig, runCrystal, type TempHome, tempDir, tempHome } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';

let fake: FakeProvider | undefined;
let home: TempHome | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
  home?.dispose();
  home = undefined;
});

function put(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

/** A Claude Code user's project: a git repository with `.claude/commands` and `.claude/skills`, copied as is. */
function claudeProject(): string {
  const workspace = tempDir('crystal-claude-project-');
  mkdirSync(join(workspace, '.git'));
  put(
    join(workspace, '.claude', 'commands', 'review.md'),
    [
      '---',
      'allowed-tools: Bash(git diff:*), Read, Grep',
      'argument-hint: [file]',
      'description: Review a file for bugs',
      '---',
      '',
      '## Task',
      '',
      'Review $ARGUMENTS for correctness and style.',
      '',
    ].join('\n'),
  );
  put(
    join(workspace, '.claude', 'skills', 'x', 'SKILL.md'),
    [
      '---',
      'name: x',
      'description: >-',
      '  Use when the user asks',
      '  for an x report.',
      '---',
      '# X report',
      'Write the report in three bullet points.',
      '',
    ].join('\n'),
  );
  return workspace;
}

async function setup(replies: FakeReply[], extra: Record<string, unknown> = {}) {
  fake = await FakeProvider.start({ replies, whenExhausted: 'error' });
  home = tempHome(fakeConfig(fake.baseUri, extra));
  return { fake, home };
}

type Body = { messages: Array<{ role: string; content: unknown }>; tools?: Array<{ function: { name: string } }> };
const text = (content: unknown): string =>
  typeof content === 'string' ? content : (content as Array<{ text?: string }>).map((p) => p.text ?? '').join('');

describe('crystal run over a Claude Code project (CMD-1, SKILL-1)', () => {
  it('CMD-1 crystal run "/review foo" runs .claude/commands/review.md unchanged: the model gets the expanded text', async () => {
    const workspace = claudeProject();
    const { fake, home } = await setup([{ text: 'looks fine' }]);
    const result = await runCrystal(['run', '--format', 'json', '/review foo'], { home: home.path, cwd: workspace });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const last = (fake.requests[0]?.body as Body).messages.at(-1);
    expect(last?.role).toBe('user');
    expect(text(last?.content)).toBe('## Task\n\nReview foo for correctness and style.');
  });

  it('CMD-1 crystal run "/review foo" enforces the command’s allowed-tools: a write is refused naming /review, exit 0', async () => {
    const workspace = claudeProject();
    const { fake, home } = await setup(
      [{ toolCalls: [{ id: 'w', name: 'write', arguments: { path: 'fixed.txt', contents: 'x' } }] }, { text: 'could not fix' }],
      { sandbox: 'off' },
    );
    const result = await runCrystal(['run', '--approval', 'full', '/review foo'], { home: home.path, cwd: workspace });
    expect(result.code).toBe(0);
    expect(existsSync(join(workspace, 'fixed.txt'))).toBe(false);
    const tool = (fake.requests[1]?.body as Body).messages.find((m) => m.role === 'tool');
    expect(text(tool?.content)).toMatch(
      /^The \/review command allows only these tools \(its allowed-tools\): Bash\(git diff:\*\), Read, Grep\./,
    );
  });

  it('CMD-1 crystal run refuses a slash command that is neither custom nor runnable, before any request', async () => {
    const workspace = claudeProject();
    const { fake, home } = await setup([{ text: 'never' }]);
    const result = await runCrystal(['run', '/nosuch foo'], { home: home.path, cwd: workspace });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('/nosuch is not one here');
    expect(fake.requests).toHaveLength(0);
  });

  it('SKILL-1 crystal run lists .claude/skills/x in the system prompt and the skill call returns its body', async () => {
    const workspace = claudeProject();
    const { fake, home } = await setup([
      { toolCalls: [{ id: 'call-1', name: 'skill', arguments: { name: 'x' } }] },
      { text: 'report written' },
    ]);
    const result = await runCrystal(['run', '--format', 'json', 'write an x report'], { home: home.path, cwd: workspace });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const first = fake.requests[0]?.body as Body;
    expect(text(first.messages[0]?.content)).toContain('- x: Use when the user asks for an x report.');
    expect(first.tools?.map((t) => t.function.name)).toContain('skill');
    const tool = (fake.requests[1]?.body as Body).messages.find((m) => m.role === 'tool');
    expect(text(tool?.content)).toContain('# X report\nWrite the report in three bullet points.');
  });

  it('SKILL-1 --skills off removes the skill tool and the guidance; a bad value is a usage error', async () => {
    const workspace = claudeProject();
    const { fake, home } = await setup([{ text: 'ok' }]);
    const off = await runCrystal(['run', '--skills', 'off', 'hi'], { home: home.path, cwd: workspace });
    expect(off.code).toBe(0);
    const first = fake.requests[0]?.body as Body;
    expect(text(first.messages[0]?.content)).not.toContain('# Skills');
    expect((first.tools ?? []).map((t) => t.function.name)).not.toContain('skill');
    const bad = await runCrystal(['run', '--skills', 'maybe', 'hi'], { home: home.path, cwd: workspace });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("--skills must be on or off, not 'maybe'.");
  });

  it('SKILL-1 config.json "skills": false turns skills off for run', async () => {
    const workspace = claudeProject();
    const { fake, home } = await setup([{ text: 'ok' }], { skills: false });
    const result = await runCrystal(['run', 'hi'], { home: home.path, cwd: workspace });
    expect(result.code).toBe(0);
    expect(text((fake.requests[0]?.body as Body).messages[0]?.content)).not.toContain('# Skills');
  });
});
