/**
 * `allowed-tools` of custom commands and skills is enforced (CMD-1, SKILL-1): the command's turn,
 * or the rest of the turn after a skill loads, may call only the listed tools; the refusal names
 * the command or skill; the next turn is free again. Real files, the fake provider over HTTP.
 */
import { existsSync, mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { FakeProvider, type FakeReply, fakeConfig } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type Config, type ControllerEvent, restrictionAllows, SessionController } from '../src/index.js';

let fake: FakeProvider | undefined;
let controller: SessionController | undefined;
afterEach(async () => {
  await controller?.close().catch(() => undefined);
  controller = undefined;
  await fake?.close();
  fake = undefined;
});

function put(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

type Body = { messages: Array<{ role: string; content: unknown; tool_call_id?: string }> };
const text = (content: unknown): string =>
  typeof content === 'string' ? content : (content as Array<{ text?: string }>).map((p) => p.text ?? '').join('');
const result = (i: number, id: string): string =>
  text((fake?.requests[i]?.body as Body).messages.find((m) => m.role === 'tool' && m.tool_call_id === id)?.content);

async function open(replies: FakeReply[]) {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'crystal-allowed-')));
  const workspace = join(root, 'repo');
  const home = join(root, 'home');
  mkdirSync(join(workspace, '.git'), { recursive: true });
  mkdirSync(home);
  put(
    join(workspace, '.claude', 'commands', 'gitstatus.md'),
    '---\ndescription: Show the status\nallowed-tools: Bash(git status:*), Read\n---\nShow me the git status. $ARGUMENTS\n',
  );
  put(
    join(workspace, '.claude', 'skills', 'readonly-review', 'SKILL.md'),
    '---\nname: readonly-review\ndescription: Review without changing files\nallowed-tools: Read, Grep, Glob\n---\nOnly read.\n',
  );
  fake = await FakeProvider.start({ replies, whenExhausted: 'error' });
  const config = fakeConfig(fake.baseUri, { sandbox: 'off', approval: 'full' }) as Config;
  controller = await SessionController.open({ home, workspace, config, env: { PATH: process.env.PATH }, userHome: root });
  const events: ControllerEvent[] = [];
  controller.on((e) => events.push(e));
  return { workspace, controller, events };
}

const until = async (predicate: () => boolean) => {
  for (let i = 0; i < 500 && !predicate(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(predicate()).toBe(true);
};

describe('allowed-tools (CMD-1, SKILL-1)', () => {
  it('CMD-1 a command’s allowed-tools hold for its turn: other tools and chained commands are refused, naming the command; the next turn is free', async () => {
    const { workspace, controller, events } = await open([
      {
        toolCalls: [
          { id: 'ok', name: 'bash', arguments: { command: 'git status --short' } },
          { id: 'w', name: 'write', arguments: { path: 'x.txt', contents: 'x' } },
          { id: 'chain', name: 'bash', arguments: { command: 'git status && touch chained.txt' } },
          { id: 'sub', name: 'bash', arguments: { command: 'git status $(touch sub.txt)' } },
        ],
      },
      { text: 'status shown' },
      { toolCalls: [{ id: 'later', name: 'write', arguments: { path: 'later.txt', contents: 'y' } }] },
      { text: 'written' },
    ]);
    controller.submit('/gitstatus');
    await until(() => events.filter((e) => e.type === 'turn-finished').length === 1);
    const refusal = result(1, 'w');
    expect(refusal).toBe(
      "The /gitstatus command allows only these tools (its allowed-tools): Bash(git status:*), Read. This 'write' call is not among them; use an allowed tool, or tell the user what else is needed.",
    );
    expect(refusal).not.toContain('The operator denied');
    expect(result(1, 'chain')).toContain('The /gitstatus command allows only these tools');
    expect(result(1, 'sub')).toContain('The /gitstatus command allows only these tools');
    expect(result(1, 'ok')).not.toContain('allows only');
    for (const name of ['x.txt', 'chained.txt', 'sub.txt']) expect(existsSync(join(workspace, name))).toBe(false);
    // A refusal by allowed-tools is no operator denial.
    const finished = events.find((e) => e.type === 'turn-finished');
    expect(finished?.type === 'turn-finished' && finished.result.denied).toBe(false);
    await controller.sendOnce('now write later.txt');
    expect(existsSync(join(workspace, 'later.txt'))).toBe(true);
  });

  it('SKILL-1 once a skill with allowed-tools loads, the rest of the turn may use only those tools', async () => {
    const { workspace, controller } = await open([
      { toolCalls: [{ id: 'w0', name: 'write', arguments: { path: 'before.txt', contents: 'b' } }] },
      { toolCalls: [{ id: 's', name: 'skill', arguments: { name: 'readonly-review' } }] },
      {
        toolCalls: [
          { id: 'r', name: 'read', arguments: { path: 'before.txt' } },
          { id: 'w1', name: 'write', arguments: { path: 'after.txt', contents: 'a' } },
        ],
      },
      { text: 'reviewed' },
    ]);
    await controller.sendOnce('review the repo');
    expect(existsSync(join(workspace, 'before.txt'))).toBe(true);
    expect(existsSync(join(workspace, 'after.txt'))).toBe(false);
    expect(result(2, 's')).toContain("only these tools may be used (the skill's allowed-tools): Read, Grep, Glob.");
    expect(result(3, 'w1')).toMatch(
      /^The skill "readonly-review" allows only these tools \(its allowed-tools\): Read, Grep, Glob\./,
    );
    expect(result(3, 'r')).toContain('b');
  });

  it('CMD-1 patterns: names in either spelling, exact and prefix Bash commands, path globs, MCP servers', () => {
    const call = (name: string, input: Record<string, unknown>) => ({ id: 'c', name, arguments: JSON.stringify(input), input });
    const r = (...patterns: string[]) => ({ source: 'the /x command', patterns });
    expect(restrictionAllows(r('LS'), call('list', {}))).toBe(true);
    expect(restrictionAllows(r('Bash(npm test)'), call('bash', { command: 'npm test' }))).toBe(true);
    expect(restrictionAllows(r('Bash(npm test)'), call('bash', { command: 'npm test --watch' }))).toBe(false);
    expect(restrictionAllows(r('Bash(npm run:*)'), call('bash', { command: 'npm run lint | tee out' }))).toBe(false);
    expect(restrictionAllows(r('Bash(npm run:*)', 'Bash(tee:*)'), call('bash', { command: 'npm run lint | tee out' }))).toBe(
      true,
    );
    expect(restrictionAllows(r('Bash(npm run:*)'), call('bash', { command: 'npm run lint > out' }))).toBe(false);
    expect(restrictionAllows(r('Bash(npm run:*)'), call('bash', { command: 'npm runaway' }))).toBe(false);
    expect(restrictionAllows(r('Edit(docs/**)'), call('edit', { path: 'docs/a/b.md' }))).toBe(true);
    expect(restrictionAllows(r('Edit(docs/*.md)'), call('edit', { path: 'src/a.md' }))).toBe(false);
    expect(restrictionAllows(r('mcp__github'), call('mcp__github__create_issue', {}))).toBe(true);
    expect(restrictionAllows(r('mcp__github'), call('mcp__githubber__x', {}))).toBe(false);
    expect(restrictionAllows(r('Todo(x)'), call('todo', {}))).toBe(false);
  });
});
