/**
 * HIST-2 / HIST-5 with the archive left on disk (issue 22 item 5): a resume that only appends
 * (`crystal run`) never reads the archive's committed messages, yet every reader still sees the
 * whole archive, and every save leaves files a full load reads back in order. Real files.
 */
import { mkdtempSync, readdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ChatMessage, emptyUsage, systemMessage, userMessage } from '@crystal/core';
import { describe, expect, it } from 'vitest';
import {
  appendToArchive,
  archiveLength,
  listSessions,
  pendingArchive,
  SessionFiles,
  type SessionState,
  serialiseSession,
} from '../src/index.js';

const home = () => mkdtempSync(join(tmpdir(), 'crystal-archive-'));
const assistant = (text: string): ChatMessage => ({ role: 'assistant', content: [{ type: 'text', text }] });
const textOf = (m: ChatMessage): string => m.content.map((p) => (p.type === 'text' ? p.text : '')).join('');
const files = (dir: string, id: string, kind: 'archive' | 'context'): string[] =>
  readdirSync(join(dir, 'sessions')).filter((f) => f.startsWith(`${id}.${kind}.`));
/** The archive file the head names. */
const headArchive = (dir: string, id: string): string =>
  JSON.parse(readFileSync(join(dir, 'sessions', `${id}.json`), 'utf8')).log.archive.file;

/** A session of `turns` question/answer pairs saved in the companion format; its context is the last pair. */
async function saved(dir: string, id: string, turns: number): Promise<ChatMessage[]> {
  const archive: ChatMessage[] = [];
  for (let i = 0; i < turns; i++) archive.push(userMessage(`question ${i}`), assistant(`answer ${i}`));
  const state: SessionState = {
    id,
    workspace: '/ws',
    createdUtc: '2026-11-30T00:00:00.000Z',
    updatedUtc: '2026-11-30T00:00:00.000Z',
    provider: 'fake',
    model: 'm',
    context: [systemMessage('live'), ...archive.slice(-2)],
    archive,
    userTurns: turns,
    modelCalls: turns,
    toolCalls: 0,
    usage: emptyUsage,
    cumulativeUsage: emptyUsage,
    queued: [],
    images: [],
    imageMarkersTagged: true,
    pendingApprovals: [],
  };
  await SessionFiles.create(dir, id).save(state);
  return archive;
}

/** What a turn does to a loaded state: the live system prompt in front, a user message and an answer after. */
function takeTurn(state: SessionState, n: number): void {
  if (state.context[0]?.role !== 'system') state.context.unshift(systemMessage('live'));
  const messages = [userMessage(`new question ${n}`), assistant(`new answer ${n}`)];
  state.context.push(...messages);
  appendToArchive(state, ...messages);
}

describe('HIST-2 an archive left on disk by a resume that only appends (issue 22 item 5)', () => {
  it('HIST-2 a deferred load reads no archive message, and its save appends only the new ones to the same file', async () => {
    const dir = home();
    const id = '20261130-000000-aaaaaa';
    const archive = await saved(dir, id, 50);
    const [file] = files(dir, id, 'archive');
    const before = readFileSync(join(dir, 'sessions', file as string));

    const loaded = SessionFiles.load(dir, id, { deferArchive: true });
    const pending = pendingArchive(loaded.state);
    expect(pending?.committed).toBe(100);
    expect(pending?.loaded).toBeUndefined();
    expect(loaded.state.context.map(textOf)).toEqual(['question 49', 'answer 49']);
    takeTurn(loaded.state, 1);
    expect(archiveLength(loaded.state)).toBe(102);
    await loaded.files.save(loaded.state);
    // Still not read: the save took only what was appended.
    expect(pending?.loaded).toBeUndefined();
    expect(pendingArchive(loaded.state)).toBe(pending);

    expect(files(dir, id, 'archive')).toEqual([file]);
    expect(headArchive(dir, id)).toBe(file);
    const after = readFileSync(join(dir, 'sessions', file as string));
    expect(after.subarray(0, before.length).equals(before)).toBe(true);
    const full = SessionFiles.load(dir, id).state;
    expect(full.archive.map(textOf)).toEqual([...archive.map(textOf), 'new question 1', 'new answer 1']);
    expect(full.context.map(textOf)).toEqual(['question 49', 'answer 49', 'new question 1', 'new answer 1']);
    const [summary] = await listSessions(dir);
    expect(summary).toMatchObject({ id, title: 'question 0', messageCount: 102 });
  });

  it('HIST-5 the first read of a deferred archive gives every message in order, and later saves append after them', async () => {
    const dir = home();
    const id = '20261130-000000-bbbbbb';
    const archive = await saved(dir, id, 20);
    const loaded = SessionFiles.load(dir, id, { deferArchive: true });
    takeTurn(loaded.state, 1);
    await loaded.files.save(loaded.state);
    takeTurn(loaded.state, 2);
    // A reader (export, /status, a fork) sees the whole archive, the unsaved turn included.
    const expected = [...archive.map(textOf), 'new question 1', 'new answer 1', 'new question 2', 'new answer 2'];
    expect(loaded.state.archive.map(textOf)).toEqual(expected);
    expect(pendingArchive(loaded.state)).toBeUndefined();
    expect(JSON.parse(serialiseSession(loaded.state)).archive).toHaveLength(44);
    takeTurn(loaded.state, 3);
    await loaded.files.save(loaded.state);
    expect(files(dir, id, 'archive')).toHaveLength(1);
    expect(SessionFiles.load(dir, id).state.archive.map(textOf)).toEqual([...expected, 'new question 3', 'new answer 3']);
  });

  it('HIST-2 an archive replaced while deferred (never read) is written as a new generation holding exactly the new one', async () => {
    const dir = home();
    const id = '20261130-000000-cccccc';
    await saved(dir, id, 10);
    const [old] = files(dir, id, 'archive');
    const loaded = SessionFiles.load(dir, id, { deferArchive: true });
    loaded.state.archive = [userMessage('only this')];
    loaded.state.context.unshift(systemMessage('live'));
    await loaded.files.save(loaded.state);
    expect(headArchive(dir, id)).not.toBe(old);
    expect(files(dir, id, 'archive')).not.toContain(old);
    expect(SessionFiles.load(dir, id).state.archive.map(textOf)).toEqual(['only this']);
  });

  it('REL-4 a shortened archive is read at once even when deferral is asked: its note, and the next save starts a new file', async () => {
    const dir = home();
    const id = '20261130-000000-dddddd';
    await saved(dir, id, 10);
    const [old] = files(dir, id, 'archive');
    const path = join(dir, 'sessions', old as string);
    truncateSync(path, readFileSync(path).length - 5);
    const loaded = SessionFiles.load(dir, id, { deferArchive: true });
    expect(pendingArchive(loaded.state)).toBeUndefined();
    expect(loaded.notes.join(' ')).toMatch(/shorter than recorded/);
    expect(loaded.state.archive).toHaveLength(19);
    takeTurn(loaded.state, 1);
    await loaded.files.save(loaded.state);
    expect(headArchive(dir, id)).not.toBe(old);
    expect(SessionFiles.load(dir, id).state.archive.map(textOf).slice(-2)).toEqual(['new question 1', 'new answer 1']);
  });

  it('REL-4 a deferred archive whose file is replaced by garbage of the same length loads what parses when read, and is rewritten', async () => {
    const dir = home();
    const id = '20261130-000000-eeeeee';
    await saved(dir, id, 5);
    const [old] = files(dir, id, 'archive');
    const path = join(dir, 'sessions', old as string);
    const loaded = SessionFiles.load(dir, id, { deferArchive: true });
    writeFileSync(path, 'x'.repeat(readFileSync(path).length));
    // Read now: nothing parses, so nothing is there, and no TypeError.
    expect(loaded.state.archive).toEqual([]);
    takeTurn(loaded.state, 1);
    await loaded.files.save(loaded.state);
    expect(headArchive(dir, id)).not.toBe(old);
    expect(SessionFiles.load(dir, id).state.archive.map(textOf)).toEqual(['new question 1', 'new answer 1']);
  });

  it('HIST-5 the last messages of an archive left on disk are read from its end, across blocks, and equal a full read', async () => {
    const dir = home();
    const id = '20261130-000000-ffffff';
    // 3,000 messages of ~120 bytes: several 64 KiB blocks.
    const archive = await saved(dir, id, 1500);
    const loaded = SessionFiles.load(dir, id, { deferArchive: true });
    const pending = pendingArchive(loaded.state);
    expect(pending?.last(50).map(textOf)).toEqual(archive.slice(-50).map(textOf));
    expect(pending?.last(1234).map(textOf)).toEqual(archive.slice(-1234).map(textOf));
    expect(pending?.last(5000).map(textOf)).toEqual(archive.map(textOf));
    expect(pending?.loaded).toBeUndefined();
    // Bytes a crashed save left past the committed length are not messages.
    const [file] = files(dir, id, 'archive');
    writeFileSync(join(dir, 'sessions', file as string), '{"torn', { flag: 'a' });
    expect(pending?.last(1).map(textOf)).toEqual(['answer 1499']);
  });
});
