/**
 * REL-1 with issue 22's overlap: a turn's first request is built and its connection opened
 * while the save of the user message waits for the disk, and the request is written only once
 * that save is committed (ChatRequest.sendAfter). A compaction before the first round (it sends
 * its own request and rewrites the context) waits for the save. The disk is made slow by
 * delaying every fsync (the real fsync still runs, on real files); the fake provider reads the
 * session from disk the moment each request arrives.
 */
import fs, { mkdtempSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeProvider, type FakeReply, fakeConfig } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type Config, SessionController, SessionFiles } from '../src/index.js';

const realFsync = fs.fsync;
/** Every fsync waits `ms` first; `during` runs as each wait ends (the disk is still being waited for). */
function slowDisk(ms: number, during: () => void): void {
  fs.fsync = ((fd: number, callback: (error: NodeJS.ErrnoException | null) => void) =>
    setTimeout(() => {
      during();
      realFsync(fd, callback);
    }, ms)) as typeof fs.fsync;
  syncBuiltinESMExports();
}

let fake: FakeProvider | undefined;
let controller: SessionController | undefined;
afterEach(async () => {
  fs.fsync = realFsync;
  syncBuiltinESMExports();
  await controller?.close().catch(() => undefined);
  controller = undefined;
  await fake?.close();
  fake = undefined;
});

/** The user messages of the session as they are on disk now ('no session on disk' before its first save). */
function userTextsOnDisk(home: string, id: string): string[] | 'no session on disk' {
  try {
    return SessionFiles.load(home, id)
      .state.archive.filter((m) => m.role === 'user')
      .map((m) => m.content.map((p) => (p.type === 'text' ? p.text : '')).join(''));
  } catch {
    return 'no session on disk';
  }
}

async function open(reply: (body: unknown) => FakeReply, window = 128000) {
  const home = mkdtempSync(join(tmpdir(), 'crystal-save-first-'));
  const onDisk: Array<string[] | 'no session on disk'> = [];
  fake = await FakeProvider.start({
    replyFor: ({ body }) => {
      onDisk.push(userTextsOnDisk(home, (controller as SessionController).session.id));
      return reply(body);
    },
  });
  const config = fakeConfig(fake.baseUri) as Config;
  const model = config.providers?.fake?.models['fake-model'];
  if (model) Object.assign(model, { contextWindow: window, maxTokens: 500 });
  controller = await SessionController.open({ home, workspace: home, config, env: {} });
  return { ctl: controller, onDisk, fake };
}

async function send(ctl: SessionController, text: string): Promise<void> {
  ctl.submit(text);
  await ctl.whenIdle();
}

describe('REL-1 issue 22 the first request waits for the save of the user message, not its preparation', () => {
  it('REL-1 issue 22 on a slow disk the request arrives only once the user message is on disk, and its connection was opened while the disk was waited for', async () => {
    const { ctl, onDisk, fake } = await open(() => ({ text: 'noted' }));
    const connectionsDuringSave: number[] = [];
    slowDisk(150, () => connectionsDuringSave.push(fake.connections));
    await send(ctl, 'remember this');
    expect(onDisk).toEqual([['remember this']]);
    // The first fsync of the save ended with the provider's connection already open (it was made meanwhile).
    expect(connectionsDuringSave[0]).toBe(1);
    await send(ctl, 'and this');
    expect(onDisk).toEqual([['remember this'], ['remember this', 'and this']]);
  });

  it('REL-1 issue 22 a compaction before the first round sends its request only once the user message is on disk', async () => {
    const isSummary = (body: unknown) => JSON.stringify(body).includes('<conversation>');
    const { ctl, onDisk, fake } = await open(
      (body) =>
        isSummary(body)
          ? { text: '## Objective\n- test\n## Important Details\n(none)', usage: { input: 300, output: 40 } }
          : { text: 'ok', usage: { input: 100, output: 5 } },
      20000,
    );
    // About 6,000 estimated tokens, then about 10,500: the second turn's first round is over the
    // 16,000-token compaction limit, so it compacts before its request.
    const first = `earlier question ${'context '.repeat(3000)}`;
    await send(ctl, first);
    slowDisk(150, () => {});
    const second = `second question ${'detail '.repeat(6400)}`;
    await send(ctl, second);
    const bodies = fake.requests.map((r) => r.body);
    expect(bodies.map(isSummary)).toEqual([false, true, false]);
    // The summary request (the second) found the second message saved.
    expect(onDisk[1]).toEqual([first, second]);
  });
});
