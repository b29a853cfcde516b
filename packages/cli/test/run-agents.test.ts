/**
 * Sub-agents through the real `crystal run` binary (AGENT-4, CORE-6): stream-json lines name
 * the agent they come from, and a process killed with SIGKILL while a child runs resumes with
 * the dangling `task` call closed as interrupted; the child is never run twice.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { INTERRUPTED_CALL_TEXT, listChildren } from '@crystal/engine';
import {
  crystalBin,
  FakeProvider,
  type FakeReply,
  fakeConfig,
  runCrystal,
  type TempHome,
  tempDir,
  tempHome,
} from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';

let fake: FakeProvider | undefined;
let home: TempHome | undefined;
let child: ChildProcess | undefined;
afterEach(async () => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  child = undefined;
  await fake?.close();
  fake = undefined;
  home?.dispose();
  home = undefined;
});

interface Body {
  readonly messages: ReadonlyArray<{ role: string; content?: unknown; tool_call_id?: string }>;
}
const text = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? content.map((p: { text?: string }) => p.text ?? '').join('')
      : '';
const isChild = (body: Body): boolean => text(body.messages[0]?.content).includes('sub-agent');

/** Routes each request: the parent's replies in order, the child's in order. */
async function startFake(parent: FakeReply[], children: FakeReply[]): Promise<FakeProvider> {
  return FakeProvider.start({
    replyFor: ({ body }) =>
      (isChild(body as Body) ? children.shift() : parent.shift()) ?? { error: { status: 500, message: 'no scripted reply' } },
  });
}
const bodies = (f: FakeProvider): Body[] =>
  f.requests.filter((r) => r.path.endsWith('/chat/completions')).map((r) => r.body as Body);

const taskCall = { id: 't1', name: 'task', arguments: { description: 'look around', prompt: 'List the workspace.' } };

describe('AGENT-4 crystal run shows children', () => {
  it('AGENT-4 stream-json lines carry the agent path: main for the parent, main/general#1 for the child', async () => {
    fake = await startFake(
      [{ toolCalls: [taskCall] }, { text: 'parent done' }],
      [{ toolCalls: [{ id: 'c1', name: 'list', arguments: { path: '.' } }] }, { text: 'child answer' }],
    );
    home = tempHome(fakeConfig(fake.baseUri));
    const result = await runCrystal(['run', '--format', 'stream-json', 'go'], { home: home.path });
    expect(result.code).toBe(0);
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.every((l) => typeof l.agent === 'string')).toBe(true);
    expect(lines.find((l) => l.type === 'agent_start')).toMatchObject({
      agent: 'main',
      child: 'main/general#1',
      profile: 'general',
    });
    const childText = lines.filter((l) => l.type === 'text' && l.agent === 'main/general#1').map((l) => l.text);
    expect(childText.join('')).toBe('child answer');
    expect(lines.find((l) => l.type === 'tool_use' && l.name === 'list')).toMatchObject({ agent: 'main/general#1' });
    expect(lines.find((l) => l.type === 'tool_use' && l.name === 'task')).toMatchObject({
      agent: 'main',
      output: 'child answer',
    });
    // The text of one network read is one line (issue 22 read coalescing); every line carries the path.
    const parentText = lines.filter((l) => l.type === 'text' && l.agent === 'main').map((l) => l.text);
    expect(parentText.join('')).toBe('parent done');
    expect(lines.at(-1)).toMatchObject({ type: 'result', agent: 'main', stopReason: 'completed', text: 'parent done' });

    // The child's transcript is exportable by its path; an unknown path names the children there are.
    const id = (lines.at(-1) as { sessionId: string }).sessionId;
    const exported = await runCrystal(['export', id, '--agent', 'main/general#1'], { home: home.path });
    expect(exported.code).toBe(0);
    const record = JSON.parse(exported.stdout) as { agent: Record<string, unknown>; archive: Array<{ kind: string }> };
    expect(record.agent).toMatchObject({ path: 'main/general#1', parentSessionId: id, callId: 't1', state: 'completed' });
    expect(record.archive.map((i) => i.kind)).toEqual(['message', 'tool_call', 'tool_result', 'message']);
    const unknown = await runCrystal(['export', id, '--agent', 'main/explore#4'], { home: home.path });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain(`Session ${id} has no child agent main/explore#4. Its children: main/general#1`);
    expect(unknown.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('AGENT-4 crystal run text mode', () => {
  it('AGENT-4 text mode names each child when it starts and when it stops; its own text stays out of stdout', async () => {
    fake = await startFake([{ toolCalls: [taskCall] }, { text: 'parent done' }], [{ text: 'CHILD TEXT' }]);
    home = tempHome(fakeConfig(fake.baseUri));
    const result = await runCrystal(['run', 'go'], { home: home.path });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('[main/general#1] look around\n');
    expect(result.stdout).toContain('(main/general#1: completed, 1 model call, 0 tool calls)\n');
    expect(result.stdout).toContain('parent done');
    // The child's answer reaches stdout only as the task call's result line, never as the parent's text.
    expect(result.stdout.split('\n').filter((l) => l.includes('CHILD TEXT'))).toEqual(['  CHILD TEXT']);
  });
});

describe('CORE-6 AGENT-4 kill -9 mid-child, then resume', () => {
  it('CORE-6 AGENT-4 the dangling task call is closed as interrupted and the child never runs twice', async () => {
    // The child's request stalls: the process is killed while the child runs.
    fake = await startFake([{ toolCalls: [taskCall] }, { text: 'resumed fine' }], [{ text: 'never arrives', stallAfter: 1 }]);
    home = tempHome(fakeConfig(fake.baseUri));
    const workspace = tempDir('crystal-agents-ws-');
    child = spawn(process.execPath, [crystalBin, 'run', '-w', workspace, 'go'], {
      env: { PATH: process.env.PATH, CRYSTAL_HOME: home.path, HOME: home.path },
      cwd: workspace,
      stdio: ['ignore', 'ignore', 'ignore'],
    });
    const f = fake;
    for (let i = 0; i < 1500 && !bodies(f).some(isChild); i++) await new Promise((r) => setTimeout(r, 20));
    expect(bodies(f).filter(isChild)).toHaveLength(1);
    const closed = new Promise((resolve) => child?.once('close', resolve));
    child.kill('SIGKILL');
    await closed;

    const sessions = join(home.path, 'sessions');
    const ids = readdirSync(sessions)
      .filter((n) => /^[^.]+\.json$/.test(n))
      .map((n) => n.slice(0, -5));
    expect(ids).toHaveLength(1);
    const id = ids[0] as string;
    // The child's linked session was saved while it ran.
    expect(listChildren(home.path, id)).toMatchObject([{ path: 'main/general#1', callId: 't1', state: 'running' }]);

    const resumed = await runCrystal(['run', '-w', workspace, '--resume', id, 'carry on'], { home: home.path, cwd: workspace });
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain('resumed fine');
    const all = bodies(f);
    // Never run twice: one child request in all, and the parent's resumed request closes the call.
    expect(all.filter(isChild)).toHaveLength(1);
    const last = all.at(-1) as Body;
    expect(isChild(last)).toBe(false);
    const result = last.messages.find((m) => m.role === 'tool' && m.tool_call_id === 't1');
    expect(text(result?.content)).toBe(INTERRUPTED_CALL_TEXT);
    expect(text(last.messages.at(-1)?.content)).toBe('carry on');
    expect(listChildren(home.path, id)).toMatchObject([{ state: 'interrupted' }]);
    expect(existsSync(join(sessions, 'children', id))).toBe(true);
    expect(readFileSync(join(sessions, `${id}.json`), 'utf8')).not.toContain('never arrives');
  });
});
