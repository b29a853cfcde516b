import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ToolDefinition } from '@crystal/core';
import { FakeProvider, fakeConfig } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type Config, type ControllerEvent, INTERRUPTED_CALL_TEXT, SessionController, SessionFiles } from '../src/index.js';

let fake: FakeProvider | undefined;
afterEach(async () => {
  await fake?.close();
});

const until = async (predicate: () => boolean) => {
  for (let i = 0; i < 400 && !predicate(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(predicate()).toBe(true);
};

describe('a crash does not lose a pending approval', () => {
  it('a write waiting for approval when the process died is asked again at resume, then the turn goes on', async () => {
    fake = await FakeProvider.start({
      replies: [
        { toolCalls: [{ id: 'w1', name: 'write', arguments: { path: 'notes.txt', contents: 'kept' } }] },
        { text: 'written' },
      ],
      whenExhausted: 'error',
    });
    const home = mkdtempSync(join(tmpdir(), 'crystal-crash-'));
    const config = fakeConfig(fake.baseUri) as Config;
    const first = await SessionController.open({ home, workspace: home, config, env: {} });
    const firstEvents: ControllerEvent[] = [];
    first.on((e) => firstEvents.push(e));
    first.submit('write notes');
    await until(() => firstEvents.some((e) => e.type === 'approval-requested'));
    const id = first.session.id;
    // The process "dies" here: nothing answers, nothing closes. The saved session is all that is left.
    const saved = SessionFiles.load(home, id).state;
    expect(saved.pendingApprovals).toEqual(['w1']);

    const second = await SessionController.open({ home, workspace: home, config, env: {}, resume: id });
    const events: ControllerEvent[] = [];
    second.on((e) => {
      events.push(e);
      if (e.type === 'approval-requested') second.answerApproval(e.prompt.id, 'once');
    });
    await until(() => events.some((e) => e.type === 'turn-finished'));
    await second.whenIdle();
    expect(events.find((e) => e.type === 'approval-requested')).toMatchObject({ prompt: { card: { tool: 'write' } } });
    expect(readFileSync(join(home, 'notes.txt'), 'utf8')).toBe('kept');
    expect(events.find((e) => e.type === 'turn-finished')).toMatchObject({
      result: { stopReason: 'completed', text: 'written' },
    });
    expect(SessionFiles.load(home, id).state.pendingApprovals).toEqual([]);
    await second.close();
  });

  it('an approved call that was running when the process died is not run again', async () => {
    let runs = 0;
    const stuck: ToolDefinition = {
      name: 'slowjob',
      description: 'never finishes in this test',
      parameters: { type: 'object' },
      execute: () => {
        runs++;
        return new Promise(() => {});
      },
    };
    fake = await FakeProvider.start({
      replies: [{ toolCalls: [{ id: 's1', name: 'slowjob', arguments: {} }] }, { text: 'after the crash' }],
    });
    const home = mkdtempSync(join(tmpdir(), 'crystal-crash-'));
    const config = fakeConfig(fake.baseUri) as Config;
    const first = await SessionController.open({ home, workspace: home, config, env: {}, extraTools: [stuck] });
    first.on((e) => {
      if (e.type === 'approval-requested') first.answerApproval(e.prompt.id, 'once');
    });
    first.submit('start the job');
    await until(() => runs === 1);
    await until(() => SessionFiles.load(home, first.session.id).state.pendingApprovals.length === 0);
    const id = first.session.id;

    const second = await SessionController.open({ home, workspace: home, config, env: {}, resume: id, extraTools: [stuck] });
    const events: ControllerEvent[] = [];
    second.on((e) => events.push(e));
    await until(() => events.some((e) => e.type === 'turn-finished'));
    expect(runs).toBe(1);
    const result = events.find((e) => e.type === 'tool-results') as { results: Array<{ content: Array<{ text: string }> }> };
    expect(result.results[0]?.content[0]?.text).toBe(INTERRUPTED_CALL_TEXT);
    expect(existsSync(join(home, 'sessions', `${id}.json`))).toBe(true);
    await second.close();
  });
});
