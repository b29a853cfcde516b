import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ToolDefinition } from '@crystal/core';
import { FakeProvider, fakeConfig } from '@crystal/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { compactionLimit, type Config, estimateTokens, SessionController, SessionFiles } from '../src/index.js';

/** A tool whose result is large: about 2,500 estimated tokens each call. */
const bigTool: ToolDefinition = {
  name: 'dump',
  description: 'Returns a large blob',
  parameters: { type: 'object', properties: { n: { type: 'number' } } },
  execute: async (input) => `result ${(input as { n: number }).n}\n${'data line '.repeat(1000)}`,
};

type Body = { messages: Array<{ role: string; content: unknown }> };
const isSummary = (body: Body) => JSON.stringify(body.messages[1]?.content ?? '').includes('<conversation>');

let fake: FakeProvider | undefined;
afterAll(async () => {
  await fake?.close();
});

describe('a long session against a small window', () => {
  it('COMPACT-1 COMPACT-3 HIST-2 HIST-3 300 turns with large tool results stay under budget; the archive keeps everything; resume continues from the compacted context', async () => {
    let turn = 0;
    fake = await FakeProvider.start({
      replyFor: ({ body }) => {
        const b = body as Body;
        if (isSummary(b)) return { text: `## Objective\n- long run, summary at turn ${turn}` };
        const last = b.messages.at(-1);
        if (last?.role === 'tool') return { text: `done with turn ${turn}` };
        return { toolCalls: [{ id: `call_${turn}`, name: 'dump', arguments: { n: turn } }] };
      },
    });
    const config = fakeConfig(fake.baseUri) as Config;
    const model = config.providers?.fake?.models['fake-model'];
    if (model) Object.assign(model, { contextWindow: 20000, maxTokens: 1000 });
    const limit = compactionLimit({ contextWindow: 20000, maxTokens: 1000 });
    const home = mkdtempSync(join(tmpdir(), 'crystal-long-'));
    const open = (resume?: string) =>
      SessionController.open({
        home,
        workspace: home,
        config,
        env: {},
        extraTools: [bigTool],
        approval: 'full',
        ...(resume ? { resume } : {}),
      });
    const controller = await open();
    controller.on((e) => {
      if (e.type === 'approval-requested') controller.answerApproval(e.prompt.id, 'once');
    });
    let maxEstimate = 0;
    for (turn = 1; turn <= 300; turn++) {
      controller.submit(`turn ${turn}`);
      await controller.whenIdle();
      const { state } = SessionFiles.load(home, controller.session.id);
      if (turn % 25 === 0 || turn === 300) {
        maxEstimate = Math.max(maxEstimate, estimateTokens(state.context));
        expect(state.context.length).toBeLessThan(40);
      }
    }
    expect(maxEstimate).toBeLessThanOrEqual(limit);
    const summaries = fake.requests.filter((r) => isSummary(r.body as Body)).length;
    expect(summaries).toBeGreaterThan(10);
    const saved = SessionFiles.load(home, controller.session.id).state;
    expect(saved.archive.filter((m) => m.role === 'user')).toHaveLength(300);
    expect(saved.archive.filter((m) => m.role === 'tool')).toHaveLength(300);
    const id = controller.session.id;
    await controller.close();

    const resumed = await open(id);
    resumed.on((e) => {
      if (e.type === 'approval-requested') resumed.answerApproval(e.prompt.id, 'once');
    });
    turn = 301;
    const before = fake.requests.length;
    resumed.submit('turn 301');
    await resumed.whenIdle();
    const first = JSON.stringify((fake.requests[before]?.body as Body).messages);
    expect(first).toContain('## Earlier context');
    expect(first).not.toContain('"turn 1"');
    expect(resumed.session.history().filter((m) => m.role === 'user')).toHaveLength(301);
    await resumed.close();
  }, 240_000);
});
