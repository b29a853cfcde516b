import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ToolDefinition, ToolInvocationPolicy } from '@crystal/core';
import { FakeProvider, type FakeReply, fakeConfig } from '@crystal/testkit';
import type { Clock, Config, EngineEvent } from '../src/index.js';
import { Session } from '../src/index.js';

/** A clock whose sleeps resolve at once and are recorded, so retry timing is tested without sleeping. */
export function manualClock(random = 0): Clock & { sleeps: number[]; time: number } {
  const clock = {
    sleeps: [] as number[],
    time: 1_000_000,
    now: () => clock.time,
    random: () => random,
    sleep: async (ms: number, signal: AbortSignal) => {
      if (signal.aborted) throw Object.assign(new Error('aborted'), { name: 'AbortError' });
      clock.sleeps.push(ms);
      clock.time += ms;
    },
  };
  return clock;
}

export interface Harness {
  fake: FakeProvider;
  session: Session;
  events: EngineEvent[];
  home: string;
  close(): Promise<void>;
}

export async function openSession(
  replies: FakeReply[],
  options: { config?: Partial<Config>; tools?: ToolDefinition[]; policy?: ToolInvocationPolicy; clock?: Clock } = {},
): Promise<Harness> {
  const fake = await FakeProvider.start({ replies, whenExhausted: 'error' });
  const home = mkdtempSync(join(tmpdir(), 'crystal-engine-'));
  const config = { ...(fakeConfig(fake.baseUri) as Config), ...(options.config ?? {}) };
  const session = await Session.open({
    home,
    workspace: home,
    config,
    env: {},
    clock: options.clock ?? manualClock(),
    ...(options.tools ? { tools: options.tools } : {}),
    ...(options.policy ? { policy: options.policy } : {}),
  });
  const events: EngineEvent[] = [];
  session.on((event) => events.push(event));
  return { fake, session, events, home, close: () => fake.close() };
}

export const echoTool: ToolDefinition = {
  name: 'echo',
  description: 'Echo text back',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  execute: async (input) => `echo: ${(input as { text: string }).text}`,
};
