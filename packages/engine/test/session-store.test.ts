import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ChatMessage, emptyUsage, systemMessage, userMessage } from '@crystal/core';
import { describe, expect, it } from 'vitest';
import { listSessions, SessionFiles, type SessionState, sessionPath, serialiseSession, UsageError } from '../src/index.js';

const home = () => mkdtempSync(join(tmpdir(), 'crystal-store-'));
const assistant = (text: string): ChatMessage => ({ role: 'assistant', content: [{ type: 'text', text }] });

function state(id: string, messages: ChatMessage[] = [userMessage('hello'), assistant('hi there')]): SessionState {
  return {
    id,
    workspace: '/ws',
    createdUtc: '2026-11-30T00:00:00.000Z',
    updatedUtc: '2026-11-30T00:00:00.000Z',
    provider: 'fake',
    model: 'm',
    context: [systemMessage('live system'), ...messages],
    archive: [...messages],
    userTurns: 1,
    modelCalls: 1,
    toolCalls: 0,
    usage: { inputTokens: 10, outputTokens: 2 },
    cumulativeUsage: emptyUsage,
  };
}

describe('session store', () => {
  it('round-trips both transcripts, counters and usage; the live system prompt is not stored', async () => {
    const dir = home();
    const s = state('s1');
    await SessionFiles.create(dir, 's1').save(s);
    const { state: loaded, notes } = SessionFiles.load(dir, 's1');
    expect(notes).toEqual([]);
    expect(loaded.archive).toEqual(s.archive);
    expect(loaded.context).toEqual(s.context.slice(1));
    expect(loaded).toMatchObject({ userTurns: 1, modelCalls: 1, usage: { inputTokens: 10, outputTokens: 2 } });
    expect(readFileSync(sessionPath(dir, 's1'), 'utf8')).not.toContain('live system');
  });

  it('appends only what is new: committed bytes are never rewritten', async () => {
    const dir = home();
    const s = state('s2');
    const files = SessionFiles.create(dir, 's2');
    await files.save(s);
    const archiveFile = readdirSync(join(dir, 'sessions')).find((f) => f.includes('.archive.')) as string;
    const before = readFileSync(join(dir, 'sessions', archiveFile), 'utf8');
    const more = [userMessage('again'), assistant('sure')];
    s.archive.push(...more);
    s.context.push(...more);
    await files.save(s);
    const after = readFileSync(join(dir, 'sessions', archiveFile), 'utf8');
    expect(after.startsWith(before)).toBe(true);
    expect(after.length).toBeGreaterThan(before.length);
    expect(SessionFiles.load(dir, 's2').state.archive).toHaveLength(4);
  });

  it('ignores bytes past the committed length (a torn append) and cuts them on the next save', async () => {
    const dir = home();
    const s = state('s3');
    const files = SessionFiles.create(dir, 's3');
    await files.save(s);
    const archiveFile = join(dir, 'sessions', readdirSync(join(dir, 'sessions')).find((f) => f.includes('.archive.')) as string);
    appendFileSync(archiveFile, '[{"kind":"message","role":"user","te');
    expect(SessionFiles.load(dir, 's3').state.archive).toHaveLength(2);
    const reopened = SessionFiles.load(dir, 's3');
    reopened.state.archive.push(userMessage('after the crash'));
    await reopened.files.save(reopened.state);
    const loaded = SessionFiles.load(dir, 's3');
    expect(loaded.notes).toEqual([]);
    expect(loaded.state.archive.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(readFileSync(archiveFile, 'utf8')).not.toContain('"te\n');
  });

  it('a rewritten transcript goes to a new generation file and the old one is removed', async () => {
    const dir = home();
    const s = state('s4');
    const files = SessionFiles.create(dir, 's4');
    await files.save(s);
    s.context = [s.context[0] as ChatMessage, systemMessage('## Earlier context\nsummary'), userMessage('tail')];
    await files.save(s);
    const names = readdirSync(join(dir, 'sessions')).filter((f) => f.includes('.context.'));
    expect(names).toHaveLength(1);
    expect(SessionFiles.load(dir, 's4').state.context.map((m) => m.role)).toEqual(['system', 'user']);
  });

  it('HIST-7 a file written before the archive existed loads its saved items as the archive', () => {
    const dir = home();
    writeFileSync(
      join(dir, 'old.json'),
      '{"id":"old","workspace":"/ws","items":[{"kind":"message","role":"system","text":"old system"},{"kind":"message","role":"user","text":"q"},{"kind":"message","role":"assistant","text":"a"}]}',
    );
    const sessions = join(dir, 'sessions');
    mkdirSync(sessions);
    renameSync(join(dir, 'old.json'), join(sessions, 'old.json'));
    const { state: loaded } = SessionFiles.load(dir, 'old');
    expect(loaded.archive.map((m) => m.role)).toEqual(['system', 'user', 'assistant']);
    expect(loaded.context.map((m) => m.role)).toEqual(['user', 'assistant']);
  });

  it('loads a single-file session in the reference shape (items and archive arrays)', () => {
    const dir = home();
    const s = state('ref');
    mkdirSync(join(dir, 'sessions'));
    writeFileSync(sessionPath(dir, 'ref'), serialiseSession(s));
    expect(SessionFiles.load(dir, 'ref').state.archive).toEqual(s.archive);
  });

  it('a corrupt head is a clear error that names the file, and the file is left unchanged', () => {
    const dir = home();
    mkdirSync(join(dir, 'sessions'));
    writeFileSync(sessionPath(dir, 'bad'), '{"id": "bad", "items": [');
    expect(() => SessionFiles.load(dir, 'bad')).toThrow(UsageError);
    expect(() => SessionFiles.load(dir, 'bad')).toThrow(/bad\.json is not valid JSON/);
    expect(readFileSync(sessionPath(dir, 'bad'), 'utf8')).toBe('{"id": "bad", "items": [');
  });

  it('a missing or shortened transcript file restores what is readable, with one note', async () => {
    const dir = home();
    const s = state('s5');
    await SessionFiles.create(dir, 's5').save(s);
    const archiveFile = join(dir, 'sessions', readdirSync(join(dir, 'sessions')).find((f) => f.includes('.archive.')) as string);
    truncateSync(archiveFile, statSync(archiveFile).size - 5);
    const loaded = SessionFiles.load(dir, 's5');
    expect(loaded.state.archive).toHaveLength(1);
    expect(loaded.notes.join(' ')).toMatch(/shorter than recorded/);
  });

  it('session files are owner-only', async () => {
    const dir = home();
    await SessionFiles.create(dir, 's6').save(state('s6'));
    for (const name of readdirSync(join(dir, 'sessions'))) {
      expect(statSync(join(dir, 'sessions', name)).mode & 0o777).toBe(0o600);
    }
  });

  it('CLI-4 lists sessions of a workspace newest first, with title and message count', async () => {
    const dir = home();
    const a = state('a');
    a.updatedUtc = '2026-11-30T01:00:00.000Z';
    const b = state('b', [userMessage('second session question'), assistant('x')]);
    b.updatedUtc = '2026-11-30T02:00:00.000Z';
    const c = { ...state('c'), workspace: '/elsewhere' };
    for (const s of [a, b, c]) await SessionFiles.create(dir, s.id).save(s);
    const here = await listSessions(dir, '/ws');
    expect(here.map((x) => x.id)).toEqual(['b', 'a']);
    expect(here[0]).toMatchObject({ title: 'second session question', messageCount: 2 });
    expect((await listSessions(dir)).map((x) => x.id).sort()).toEqual(['a', 'b', 'c']);
  });
});
