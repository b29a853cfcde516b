import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { FakeProvider, type FakeReply, fakeConfig } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type Config,
  type ControllerEvent,
  discoverCommands,
  discoverSkills,
  expandCommand,
  parseFrontMatter,
  SessionController,
} from '../src/index.js';
import { buildSystemPrompt } from '../src/prompts/system-prompt.js';

let fake: FakeProvider | undefined;
let controller: SessionController | undefined;
afterEach(async () => {
  await controller?.quit();
  controller = undefined;
  await fake?.close();
  fake = undefined;
});

function temp(prefix: string): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)));
}

function put(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

/** A workspace (a git repository) with its own Home and user home, nothing shared with the machine. */
function project() {
  const root = temp('crystal-ext-');
  const workspace = join(root, 'repo');
  mkdirSync(join(workspace, '.git'), { recursive: true });
  const home = join(root, 'crystal-home');
  const userHome = join(root, 'user');
  mkdirSync(home, { recursive: true });
  mkdirSync(userHome, { recursive: true });
  return { root, workspace, home, userHome };
}

async function open(replies: FakeReply[], places: ReturnType<typeof project>, extra: Partial<Config> = {}) {
  fake = await FakeProvider.start({ replies, whenExhausted: 'error' });
  controller = await SessionController.open({
    home: places.home,
    workspace: places.workspace,
    userHome: places.userHome,
    config: { ...(fakeConfig(fake.baseUri) as Config), ...extra },
    env: {},
  });
  const events: ControllerEvent[] = [];
  controller.on((e) => events.push(e));
  return { controller, events, fake };
}

type Body = { messages: Array<{ role: string; content: unknown }>; tools?: Array<{ function: { name: string } }> };
const body = (f: FakeProvider, i: number): Body => f.requests[i]?.body as Body;
const text = (content: unknown): string =>
  typeof content === 'string' ? content : (content as Array<{ text?: string }>).map((p) => p.text ?? '').join('');

describe('front matter', () => {
  it('SKILL-1 reads plain, quoted, folded and literal values and lists', () => {
    const parsed = parseFrontMatter(
      [
        '---',
        'name: pdf-tools',
        'description: >',
        '  Fill and merge',
        '  PDF forms.',
        'notes: |-',
        '  line one',
        '  line two',
        'argument-hint: "[file] [pages]"',
        'allowed-tools: Bash(git add:*), Bash(git status:*), Read',
        'tags: [a, "b"]',
        '---',
        '# Body',
      ].join('\n'),
    );
    expect(parsed.present).toBe(true);
    expect(parsed.fields).toMatchObject({
      name: 'pdf-tools',
      description: 'Fill and merge PDF forms.\n',
      notes: 'line one\nline two',
      'argument-hint': '[file] [pages]',
      tags: ['a', 'b'],
    });
    expect(parsed.body).toBe('# Body');
  });
});

describe('custom slash commands (CMD-1)', () => {
  it('CMD-1 a .claude/commands file runs unchanged: /review foo sends the expanded text as the user message', async () => {
    const places = project();
    put(
      join(places.workspace, '.claude', 'commands', 'review.md'),
      '---\ndescription: Review a file\nargument-hint: <file>\nallowed-tools: Read, Grep\n---\nReview $ARGUMENTS carefully; start with $1.\n',
    );
    const { controller, fake } = await open([{ text: 'reviewed' }], places);
    controller.submit('/review foo bar');
    await controller.whenIdle();
    expect(fake.requests).toHaveLength(1);
    const last = body(fake, 0).messages.at(-1);
    expect(last?.role).toBe('user');
    expect(text(last?.content)).toBe('Review foo bar carefully; start with foo.');
  });

  it('CMD-1 /help and the command list show custom commands with their hint and description; built-ins win a name clash', async () => {
    const places = project();
    put(
      join(places.workspace, '.crystal', 'commands', 'ship.md'),
      '---\ndescription: Ship it\nargument-hint: [version] [notes]\n---\nShip $1.\n',
    );
    put(join(places.home, 'commands', 'daily.md'), '# Daily standup notes\nWrite my standup.\n');
    put(join(places.workspace, '.claude', 'commands', 'help.md'), 'I am not help.\n');
    const { controller, events, fake } = await open([], places);
    const names = controller.commands().map((c) => c.usage);
    expect(names).toContain('/ship [version] [notes]');
    expect(names).toContain('/daily');
    expect(names.filter((n) => n.startsWith('/help'))).toEqual(['/help']);
    controller.submit('/help');
    await controller.whenIdle();
    const help = events.find((e) => e.type === 'command-output');
    const output = help?.type === 'command-output' ? help.output : undefined;
    expect(output?.kind).toBe('text');
    const helpBody = output?.kind === 'text' ? output.text : '';
    expect(helpBody).toMatch(/\/ship \[version\] \[notes\]\s+Ship it/);
    expect(helpBody).toMatch(/\/daily\s+Daily standup notes/);
    expect(fake.requests).toHaveLength(0);
  });

  it('CMD-1 precedence: project .crystal over project .claude over Home over ~/.claude; subfolders are name:space', () => {
    const places = project();
    put(join(places.userHome, '.claude', 'commands', 'a.md'), 'user claude a');
    put(join(places.userHome, '.claude', 'commands', 'b.md'), 'user claude b');
    put(join(places.home, 'commands', 'b.md'), 'home b');
    put(join(places.home, 'commands', 'c.md'), 'home c');
    put(join(places.workspace, '.claude', 'commands', 'c.md'), 'project claude c');
    put(join(places.workspace, '.claude', 'commands', 'd.md'), 'project claude d');
    put(join(places.workspace, '.crystal', 'commands', 'd.md'), 'project crystal d');
    put(join(places.workspace, '.crystal', 'commands', 'git', 'pr.md'), 'open a PR');
    const commands = discoverCommands(places);
    expect(Object.fromEntries(['a', 'b', 'c', 'd', 'git:pr'].map((n) => [n, commands.get(n)?.body.trim()]))).toEqual({
      a: 'user claude a',
      b: 'home b',
      c: 'project claude c',
      d: 'project crystal d',
      'git:pr': 'open a PR',
    });
  });

  it('CMD-1 $ARGUMENTS, $1..$9 with quotes, missing words empty, and arguments appended when the body has no placeholder', () => {
    const command = { name: 'x', description: '', argumentHint: '', allowedTools: [], path: 'x.md' };
    expect(expandCommand({ ...command, body: 'Fix $1 in $2 ($3). All: $ARGUMENTS' }, '"issue 12" src/a.ts')).toBe(
      'Fix issue 12 in src/a.ts (). All: "issue 12" src/a.ts',
    );
    expect(expandCommand({ ...command, body: 'Summarise the diff.\n' }, 'briefly')).toBe(
      'Summarise the diff.\n\nARGUMENTS: briefly',
    );
    expect(expandCommand({ ...command, body: 'Summarise the diff.\n' }, '')).toBe('Summarise the diff.');
  });

  it('CMD-1 a command whose text starts with / is sent as a message, not run again (no loop)', async () => {
    const places = project();
    put(join(places.workspace, '.crystal', 'commands', 'loop.md'), '/loop $ARGUMENTS');
    const { controller, fake } = await open([{ text: 'ok' }], places);
    controller.submit('/loop again');
    await controller.whenIdle();
    expect(text(body(fake, 0).messages.at(-1)?.content)).toBe('/loop again');
  });
});

describe('skills (SKILL-1)', () => {
  const skill = (name: string, description: string, bodyText = 'Do the thing.') =>
    `---\nname: ${name}\ndescription: ${description}\n---\n${bodyText}\n`;

  it('SKILL-1 a .claude/skills/x/SKILL.md is listed in the system prompt and the skill tool returns its body', async () => {
    const places = project();
    put(join(places.workspace, '.claude', 'skills', 'x', 'SKILL.md'), skill('x', 'Use for x-shaped tasks.', 'Step 1: say X.'));
    const { controller, fake } = await open(
      [{ toolCalls: [{ id: 'c1', name: 'skill', arguments: { name: 'x' } }] }, { text: 'done' }],
      places,
    );
    controller.submit('do an x task');
    await controller.whenIdle();
    const first = body(fake, 0);
    const system = text(first.messages[0]?.content);
    expect(first.messages[0]?.role).toBe('system');
    expect(system).toContain('# Skills');
    expect(system).toContain('- x: Use for x-shaped tasks.');
    // Guidance sits after the <env> block.
    expect(system.indexOf('# Skills')).toBeGreaterThan(system.indexOf('</env>'));
    expect(
      first.tools
        ?.map((t) => t.function.name)
        .filter((n) => n !== 'task')
        .at(-1),
    ).toBe('skill');
    const result = body(fake, 1).messages.find((m) => m.role === 'tool');
    expect(text(result?.content)).toContain('Step 1: say X.');
    expect(text(result?.content)).not.toContain('description:');
  });

  it('SKILL-1 skills off (config) removes the tool and the guidance', async () => {
    const places = project();
    put(join(places.workspace, '.claude', 'skills', 'x', 'SKILL.md'), skill('x', 'Use for x.'));
    const { controller, fake } = await open([{ text: 'ok' }], places, { skills: false } as Partial<Config>);
    controller.submit('hi');
    await controller.whenIdle();
    const first = body(fake, 0);
    expect(text(first.messages[0]?.content)).not.toContain('# Skills');
    expect(first.tools?.map((t) => t.function.name)).not.toContain('skill');
  });

  it('SKILL-1 search order: global then project from the git root down; later wins; Crystal folders last', () => {
    const places = project();
    const nested = join(places.workspace, 'pkg', 'app');
    mkdirSync(nested, { recursive: true });
    put(join(places.userHome, '.claude', 'skills', 'a', 'SKILL.md'), skill('a', 'claude global a'));
    put(join(places.userHome, '.agents', 'skills', 'a', 'SKILL.md'), skill('a', 'agents global a'));
    put(join(places.home, 'skills', 'b', 'SKILL.md'), skill('b', 'crystal home b'));
    put(join(places.userHome, '.config', 'opencode', 'skill', 'b', 'SKILL.md'), skill('b', 'opencode global b'));
    put(join(places.workspace, '.claude', 'skills', 'c', 'SKILL.md'), skill('c', 'root claude c'));
    put(join(places.workspace, 'pkg', 'app', '.opencode', 'skills', 'c', 'SKILL.md'), skill('c', 'nested opencode c'));
    put(join(places.workspace, '.crystal', 'skill', 'd', 'SKILL.md'), skill('d', 'root crystal d'));
    put(join(places.workspace, '.claude', 'skills', 'd', 'SKILL.md'), skill('d', 'root claude d'));
    // Above the git root: never looked at.
    put(join(places.root, '.claude', 'skills', 'e', 'SKILL.md'), skill('e', 'outside the repo'));
    const found = discoverSkills({ ...places, workspace: nested });
    expect(Object.fromEntries([...found.skills].map(([id, s]) => [id, s.description]))).toEqual({
      a: 'agents global a',
      b: 'crystal home b',
      c: 'nested opencode c',
      d: 'root crystal d',
    });
  });

  it('SKILL-1 id rules: a valid directory name wins, else a valid name; invalid and incomplete skills are skipped with a note', () => {
    const places = project();
    const dir = join(places.workspace, '.claude', 'skills');
    put(join(dir, 'good-one', 'SKILL.md'), skill('Something Else', 'dir name is the id'));
    put(join(dir, 'Bad_Dir', 'SKILL.md'), skill('named-by-front-matter', 'name is the id'));
    put(join(dir, 'Also Bad', 'SKILL.md'), skill('Not Valid', 'no valid id'));
    put(join(dir, 'no-desc', 'SKILL.md'), '---\nname: no-desc\n---\nbody');
    put(join(dir, 'no-front', 'SKILL.md'), 'just text');
    put(join(dir, `${'a'.repeat(65)}`, 'SKILL.md'), skill('short-name', 'long dir name falls back to name'));
    const found = discoverSkills(places);
    expect([...found.skills.keys()].sort()).toEqual(['good-one', 'named-by-front-matter', 'short-name']);
    expect(found.notes.join('\n')).toMatch(/Also Bad.*valid id/);
    expect(found.notes.join('\n')).toMatch(/no-desc.*"name" and "description"/);
    expect(found.notes.join('\n')).toMatch(/no-front.*"name" and "description"/);
  });

  it('SKILL-1 the skill tool names the available skills when asked for an unknown one', async () => {
    const places = project();
    put(join(places.workspace, '.crystal', 'skills', 'x', 'SKILL.md'), skill('x', 'X.'));
    const { controller, fake } = await open(
      [{ toolCalls: [{ id: 'c1', name: 'skill', arguments: { name: 'nope' } }] }, { text: 'done' }],
      places,
    );
    controller.submit('go');
    await controller.whenIdle();
    const result = body(fake, 1).messages.find((m) => m.role === 'tool');
    expect(text(result?.content)).toBe("Unknown skill 'nope'. Available skills: x.");
  });

  it('SKILL-1 reads inside a skill tree outside the workspace auto-pass (through a symlink too); other outside reads ask', async () => {
    const places = project();
    const real = join(places.root, 'shared-skills', 'x');
    put(join(real, 'SKILL.md'), skill('x', 'X.'));
    put(join(real, 'ref.md'), 'reference text');
    put(join(places.root, 'secret.txt'), 'not a skill');
    mkdirSync(join(places.userHome, '.claude'), { recursive: true });
    symlinkSync(join(places.root, 'shared-skills'), join(places.userHome, '.claude', 'skills'));
    const { controller, events, fake } = await open(
      [
        {
          toolCalls: [
            { id: 'c1', name: 'read', arguments: { path: join(places.userHome, '.claude', 'skills', 'x', 'ref.md') } },
            { id: 'c2', name: 'read', arguments: { path: join(places.root, 'secret.txt') } },
          ],
        },
        { text: 'done' },
      ],
      places,
    );
    controller.on((e) => {
      if (e.type === 'approval-requested') controller.answerApproval(e.prompt.id, 'deny');
    });
    controller.submit('read them');
    await controller.whenIdle();
    const asked = events.filter((e) => e.type === 'approval-requested');
    expect(asked).toHaveLength(1);
    const results = body(fake, 1)
      .messages.filter((m) => m.role === 'tool')
      .map((m) => text(m.content));
    expect(results[0]).toContain('reference text');
    expect(results[1]).not.toContain('not a skill');
  });

  it('SKILL-1 buildSystemPrompt with skills false has no guidance', () => {
    const places = project();
    put(join(places.workspace, '.claude', 'skills', 'x', 'SKILL.md'), skill('x', 'X.'));
    const base = { mode: 'work' as const, provider: 'p', model: 'm', ...places };
    expect(buildSystemPrompt(base)).toContain('- x: X.');
    expect(buildSystemPrompt({ ...base, skills: false })).not.toContain('# Skills');
  });
});
