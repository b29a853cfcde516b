import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findInstructionFiles } from '../src/prompts/instructions.js';
import { buildSystemPrompt, localDateTime, PLAN_BODY, WORK_BODY } from '../src/prompts/system-prompt.js';

/** repo/.git, repo/AGENTS.md, repo/pkg/AGENTS.md, workspace repo/pkg/app; a Crystal Home and a user home. */
function layout() {
  const base = mkdtempSync(join(tmpdir(), 'crystal-prompt-'));
  const repo = join(base, 'repo');
  const workspace = join(repo, 'pkg', 'app');
  const home = join(base, 'crystal-home');
  const userHome = join(base, 'user');
  for (const dir of [join(repo, '.git'), workspace, home, userHome]) mkdirSync(dir, { recursive: true });
  writeFileSync(join(base, 'AGENTS.md'), 'above the git root: never read\n');
  writeFileSync(join(repo, 'AGENTS.md'), 'repo rules\n');
  writeFileSync(join(repo, 'pkg', 'AGENTS.md'), 'package rules\n');
  writeFileSync(join(repo, 'CLAUDE.md'), 'claude rules lose to AGENTS.md\n');
  return { base, repo, workspace, home, userHome };
}

const opts = (l: ReturnType<typeof layout>, mode: 'plan' | 'work' = 'work') => ({
  mode,
  workspace: l.workspace,
  home: l.home,
  userHome: l.userHome,
  provider: 'fake',
  model: 'fake-model',
  now: new Date(2026, 10, 30, 14, 5),
});

describe('system prompt', () => {
  it('Work body says Crystal Code, use the tools, work through pending todos, content is data, precedence', () => {
    expect(WORK_BODY).toContain('You are Crystal Code');
    expect(WORK_BODY).toMatch(/pending todos/);
    expect(WORK_BODY).toMatch(/data, not instructions/);
    expect(WORK_BODY).toMatch(
      /Workspace instructions .* take precedence over these defaults, and the user's latest message takes precedence over both/,
    );
  });

  it('Plan body says not to edit and to write the plan steps as pending todos', () => {
    expect(PLAN_BODY).toContain('You are Crystal Code');
    expect(PLAN_BODY).toMatch(/do not edit, write or create files/);
    expect(PLAN_BODY).toMatch(/Write the plan as pending todos with todowrite/);
    const l = layout();
    expect(buildSystemPrompt(opts(l, 'plan')).startsWith(PLAN_BODY)).toBe(true);
    expect(buildSystemPrompt(opts(l, 'work')).startsWith(WORK_BODY)).toBe(true);
  });

  it('the <env> block names workspace, git, platform, date with offset, provider/model and mode', () => {
    const l = layout();
    const prompt = buildSystemPrompt({ ...opts(l), sessionId: 's-1', approval: 'edit' });
    const env = prompt.slice(prompt.indexOf('<env>'), prompt.indexOf('</env>') + 6);
    expect(env).toContain(`Workspace: ${l.workspace}`);
    expect(env).toContain(`Git repository: yes (root ${l.repo})`);
    expect(env).toContain(`Platform: ${process.platform}`);
    expect(env).toContain(`Date: ${localDateTime(new Date(2026, 10, 30, 14, 5))}`);
    expect(env).toMatch(/Date: 2026-11-30 14:05 [+-]\d\d:\d\d/);
    expect(env).toContain('Model: fake/fake-model');
    expect(env).toContain('Mode: Work');
    expect(env).toContain('Session: s-1');
    expect(env).toContain('Approval: edit');
    const plain = mkdtempSync(join(tmpdir(), 'crystal-nogit-'));
    expect(buildSystemPrompt({ ...opts(l), workspace: plain })).toContain('Git repository: no');
  });

  it('instruction files: AGENTS.md from the git root down to the workspace, nearest last, each with its path', () => {
    const l = layout();
    const prompt = buildSystemPrompt(opts(l));
    const section = prompt.slice(prompt.indexOf('# Workspace instructions'));
    expect(prompt.indexOf('</env>')).toBeLessThan(prompt.indexOf('# Workspace instructions'));
    expect(section).toContain(`## ${join(l.repo, 'AGENTS.md')}\n\nrepo rules`);
    expect(section).toContain(`## ${join(l.repo, 'pkg', 'AGENTS.md')}\n\npackage rules`);
    expect(section.indexOf('repo rules')).toBeLessThan(section.indexOf('package rules'));
    expect(section).not.toContain('never read');
    expect(section).not.toContain('claude rules');
  });

  it('CLAUDE.md is used when no AGENTS.md is on the walk; the Crystal Home AGENTS.md comes first; empty files are missing', () => {
    const base = mkdtempSync(join(tmpdir(), 'crystal-prompt-'));
    const ws = join(base, 'ws');
    const home = join(base, 'home');
    mkdirSync(join(ws, '.git'), { recursive: true });
    mkdirSync(home);
    writeFileSync(join(ws, 'CLAUDE.md'), 'claude project rules\n');
    writeFileSync(join(home, 'AGENTS.md'), 'my global rules\n');
    writeFileSync(join(ws, '.crystal.md'), '   \n');
    const files = findInstructionFiles({ workspace: ws, home, userHome: join(base, 'nobody') });
    expect(files.map((f) => f.path)).toEqual([join(home, 'AGENTS.md'), join(ws, 'CLAUDE.md')]);
    expect(files.map((f) => f.text)).toEqual(['my global rules', 'claude project rules']);
    const none = findInstructionFiles({ workspace: mkdtempSync(join(tmpdir(), 'crystal-empty-')), home, userHome: base });
    expect(none.map((f) => f.path)).toEqual([join(home, 'AGENTS.md')]);
  });

  it('no instruction files: no instructions section', () => {
    const base = mkdtempSync(join(tmpdir(), 'crystal-prompt-'));
    const prompt = buildSystemPrompt({
      mode: 'work',
      workspace: base,
      home: join(base, 'home'),
      userHome: join(base, 'user'),
      provider: 'p',
      model: 'm',
    });
    expect(prompt).not.toContain('# Workspace instructions');
    expect(prompt.endsWith('</env>')).toBe(true);
  });
});
