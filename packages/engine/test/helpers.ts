import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ToolDefinition, ToolInvocationPolicy } from '@crystal/core';
import { FakeProvider, type FakeReply, fakeConfig } from '@crystal/testkit';
import { expect } from 'vitest';
import type { Clock, Config, ControllerEvent, EngineEvent, SessionController } from '../src/index.js';
import { Session } from '../src/index.js';

/** A clock whose sleeps resolve at once and are recorded, so retry timing is tested without sleeping. */
export function manualClock(random = 0): Clock & { sleeps: number[]; time: number; advance(ms: number): void } {
  const timers: Array<{ due: number; fn: () => void }> = [];
  const clock = {
    sleeps: [] as number[],
    time: 1_000_000,
    now: () => clock.time,
    random: () => random,
    advance(ms: number) {
      clock.time += ms;
      for (const timer of timers.splice(0)) {
        if (timer.due <= clock.time) timer.fn();
        else timers.push(timer);
      }
    },
    schedule(ms: number, fn: () => void) {
      const timer = { due: clock.time + ms, fn };
      timers.push(timer);
      return () => {
        const i = timers.indexOf(timer);
        if (i >= 0) timers.splice(i, 1);
      };
    },
    sleep: async (ms: number, signal: AbortSignal) => {
      if (signal.aborted) throw Object.assign(new Error('aborted'), { name: 'AbortError' });
      clock.sleeps.push(ms);
      clock.advance(ms);
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
  options: {
    config?: Partial<Config>;
    tools?: ToolDefinition[];
    policy?: ToolInvocationPolicy;
    clock?: Clock;
    imageInput?: boolean;
  } = {},
): Promise<Harness> {
  const fake = await FakeProvider.start({ replies, whenExhausted: 'error' });
  const home = mkdtempSync(join(tmpdir(), 'crystal-engine-'));
  const base = fakeConfig(fake.baseUri) as Config;
  if (options.imageInput) {
    const model = base.providers?.fake?.models['fake-model'];
    if (model) model.imageInput = true;
  }
  const config = { ...base, ...(options.config ?? {}) };
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

/** Polls `predicate` every 10 ms (up to 10 s), then asserts it holds. */
export const until = async (predicate: () => boolean): Promise<void> => {
  for (let i = 0; i < 1000 && !predicate(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(predicate()).toBe(true);
};

/** A model reply that calls bash with `command`. */
export const bashReply = (command: string): FakeReply => ({ toolCalls: [{ name: 'bash', arguments: { command } }] });

/**
 * Records a controller's events: `send` submits a message and waits for its turn to finish,
 * `command` submits a slash command and answers its output.
 */
export function drive(ctl: SessionController): {
  events: ControllerEvent[];
  send: (text: string) => Promise<void>;
  command: (text: string) => Promise<{ kind: string; text: string }>;
} {
  const events: ControllerEvent[] = [];
  ctl.on((e) => events.push(e));
  const finished = () => events.filter((e) => e.type === 'turn-finished').length;
  const outputs = () => events.filter((e) => e.type === 'command-output');
  const send = async (text: string) => {
    const n = finished();
    ctl.submit(text);
    await until(() => finished() > n);
  };
  const command = async (text: string) => {
    const n = outputs().length;
    ctl.submit(text);
    await until(() => outputs().length > n);
    return (outputs().at(-1) as { output: { kind: string; text: string } }).output;
  };
  return { events, send, command };
}
