/**
 * REL-1: `crystal run` saves like the interactive surface, the user message before the first
 * request, then every committed round and tool batch. Each test kills a real `crystal run`
 * with SIGKILL at one moment of its turn and reads what the session files hold, then resumes.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChatMessage } from '@crystal/core';
import { SessionFiles } from '@crystal/engine';
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
/** What the running `crystal run` wrote to stdout so far. */
let output = '';
afterEach(async () => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  child = undefined;
  await fake?.close();
  fake = undefined;
  home?.dispose();
  home = undefined;
});

/** A reply that never finishes within the test: the provider stalls mid-request. */
const stall: FakeReply = { text: 'never arrives', delayMs: 120_000 };

async function startRun(replies: FakeReply[], args: readonly string[], workspace: string): Promise<ChildProcess> {
  fake = await FakeProvider.start({ replies, whenExhausted: 'error' });
  home = tempHome(fakeConfig(fake.baseUri));
  child = spawn(process.execPath, [crystalBin, 'run', '-w', workspace, ...args], {
    env: { PATH: process.env.PATH, CRYSTAL_HOME: home.path, HOME: home.path },
    cwd: workspace,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  output = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  child.stderr?.resume();
  return child;
}

async function until(predicate: () => boolean): Promise<void> {
  for (let i = 0; i < 1500 && !predicate(); i++) await new Promise((r) => setTimeout(r, 20));
  expect(predicate()).toBe(true);
}

async function kill9(process: ChildProcess): Promise<void> {
  const closed = new Promise((resolve) => process.once('close', resolve));
  process.kill('SIGKILL');
  await closed;
}

function savedSessionId(): string {
  const dir = join((home as TempHome).path, 'sessions');
  const heads = existsSync(dir) ? readdirSync(dir).filter((f) => /^[^.]+\.json$/.test(f)) : [];
  expect(heads).toHaveLength(1);
  return (heads[0] as string).replace(/\.json$/, '');
}

const roles = (messages: readonly ChatMessage[]) => messages.map((m) => m.role);
const textOf = (message: ChatMessage | undefined) =>
  (message?.content ?? [])
    .map((p) => (p.type === 'text' ? p.text : p.type === 'tool-result' ? JSON.stringify(p.content) : ''))
    .join('');

describe('REL-1 a killed crystal run keeps what its turn committed', () => {
  it('REL-1 killed while the provider stalls on the first request: the user message is saved', async () => {
    const ws = tempDir('crystal-ws-');
    const run = await startRun([stall], ['remember this question'], ws);
    await until(() => (fake as FakeProvider).requests.length === 1);
    await kill9(run);
    const id = savedSessionId();
    const { state } = SessionFiles.load((home as TempHome).path, id);
    expect(roles(state.archive)).toEqual(['user']);
    expect(textOf(state.archive[0])).toBe('remember this question');
  });

  it('REL-1 killed while the provider stalls on the request after a tool batch: the user message, the call and its result are saved', async () => {
    const ws = tempDir('crystal-ws-');
    writeFileSync(join(ws, 'notes.txt'), 'the secret is 42\n');
    const run = await startRun(
      [{ toolCalls: [{ id: 'r1', name: 'read', arguments: { path: 'notes.txt' } }] }, stall],
      ['read notes.txt'],
      ws,
    );
    await until(() => (fake as FakeProvider).requests.length === 2);
    await kill9(run);
    const id = savedSessionId();
    const { state } = SessionFiles.load((home as TempHome).path, id);
    expect(roles(state.archive)).toEqual(['user', 'assistant', 'tool']);
    expect(textOf(state.archive[0])).toBe('read notes.txt');
    expect(state.archive[1]?.content.find((p) => p.type === 'tool-call')).toMatchObject({ id: 'r1', name: 'read' });
    expect(textOf(state.archive[2])).toContain('the secret is 42');

    // The resumed session sends the saved user message and the tool result with the next prompt.
    const next = await FakeProvider.start({ replies: [{ text: 'it is 42' }], whenExhausted: 'error' });
    try {
      (home as TempHome).writeConfig(fakeConfig(next.baseUri));
      const resumed = await runCrystal(['run', '--format', 'json', '-w', ws, '--resume', id, 'what was it?'], {
        home: (home as TempHome).path,
        cwd: ws,
      });
      expect(resumed.code).toBe(0);
      const messages = (next.requests[0]?.body as { messages: Array<{ role: string; content: unknown }> }).messages;
      expect(messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'user']);
      expect(JSON.stringify(messages[3]?.content)).toContain('the secret is 42');
    } finally {
      await next.close();
    }
  });

  it('REL-1 killed while a tool runs: the round with its call is saved, and a resume closes the call as interrupted', async () => {
    const ws = tempDir('crystal-ws-');
    const run = await startRun(
      [{ toolCalls: [{ id: 'b1', name: 'bash', arguments: { command: 'echo started > started.txt; sleep 3' } }] }, stall],
      ['--approval', 'full', 'run the slow command'],
      ws,
    );
    await until(() => existsSync(join(ws, 'started.txt')));
    await kill9(run);
    const id = savedSessionId();
    const { state } = SessionFiles.load((home as TempHome).path, id);
    expect(roles(state.archive)).toEqual(['user', 'assistant']);
    expect(state.archive[1]?.content.find((p) => p.type === 'tool-call')).toMatchObject({ id: 'b1', name: 'bash' });

    const next = await FakeProvider.start({ replies: [{ text: 'ok' }], whenExhausted: 'error' });
    try {
      (home as TempHome).writeConfig(fakeConfig(next.baseUri));
      const resumed = await runCrystal(['run', '--format', 'json', '-w', ws, '--resume', id, 'go on'], {
        home: (home as TempHome).path,
        cwd: ws,
      });
      expect(resumed.code).toBe(0);
      const messages = (next.requests[0]?.body as { messages: Array<{ role: string; content: unknown }> }).messages;
      expect(messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'user']);
      expect(JSON.stringify(messages[3]?.content)).toContain('interrupted');
    } finally {
      await next.close();
    }
  });

  it('REL-1 SIGHUP (the terminal closed) interrupts the turn and saves it with the partial answer marked as interrupted', async () => {
    const ws = tempDir('crystal-ws-');
    const run = await startRun(
      [{ text: 'I was saying something', textTokens: 2000, delayMs: 30 }],
      ['--format', 'stream-json', 'talk to me'],
      ws,
    );
    // The answer is streaming: its first words reached stdout.
    await until(() => output.includes('"type":"text"'));
    const closed = new Promise<number | null>((resolve) => run.once('close', resolve));
    run.kill('SIGHUP');
    expect(await closed).toBe(5);
    const { state } = SessionFiles.load((home as TempHome).path, savedSessionId());
    expect(roles(state.archive)).toEqual(['user', 'assistant']);
    expect(textOf(state.archive[1]).endsWith('[Answer interrupted]')).toBe(true);
  });
});
