/**
 * The fake provider scripted for a parent and its children: every request is routed by who
 * sent it (the parent, or the child whose task prompt it carries), so parallel children get
 * their own replies whatever order their requests arrive in.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeProvider, type FakeReply, fakeConfig } from '@crystal/testkit';
import { type Config, type ControllerEvent, type ControllerOptions, SessionController } from '../src/index.js';

export interface WireMessage {
  readonly role: string;
  readonly content?: unknown;
  readonly tool_calls?: ReadonlyArray<{ id: string; function: { name: string; arguments: string } }>;
  readonly tool_call_id?: string;
}

export interface WireBody {
  readonly model: string;
  readonly messages: readonly WireMessage[];
  readonly tools?: ReadonlyArray<{ function: { name: string; description: string; parameters: unknown } }>;
}

export const textOf = (message: WireMessage | undefined): string =>
  typeof message?.content === 'string'
    ? message.content
    : Array.isArray(message?.content)
      ? (message.content as Array<{ text?: string }>).map((p) => p.text ?? '').join('')
      : '';

/** The task prompt of a child request; undefined for the parent's requests. */
export const childPromptOf = (body: WireBody): string | undefined => {
  const system = textOf(body.messages[0]);
  if (!/sub-agent|CUSTOM AGENT/.test(system)) return undefined;
  return textOf(body.messages.find((m) => m.role === 'user'));
};

export const toolNames = (body: WireBody): string[] => (body.tools ?? []).map((t) => t.function.name);

export interface Script {
  readonly parent: FakeReply[];
  /** Replies per child, keyed by the child's task prompt. */
  readonly children: Record<string, FakeReply[]>;
}

export interface Rig {
  fake: FakeProvider;
  controller: SessionController;
  events: ControllerEvent[];
  home: string;
  workspace: string;
  config: Config;
  parentBodies(): WireBody[];
  childBodies(prompt: string): WireBody[];
}

export async function startRig(
  script: Script,
  options: {
    config?: Record<string, unknown>;
    approve?: (event: Extract<ControllerEvent, { type: 'approval-requested' }>) => 'once' | 'deny' | undefined;
    home?: string;
    workspace?: string;
    open?: Partial<ControllerOptions>;
    models?: Record<string, unknown>;
  } = {},
): Promise<Rig> {
  const parent = [...script.parent];
  const children = new Map(Object.entries(script.children).map(([k, v]) => [k, [...v]]));
  const fake = await FakeProvider.start({
    replyFor: ({ body }) => {
      const prompt = childPromptOf(body as WireBody);
      const queue = prompt === undefined ? parent : children.get(prompt);
      return queue?.shift() ?? { error: { status: 500, message: `no scripted reply for ${prompt ?? 'the parent'}` } };
    },
  });
  const home = options.home ?? mkdtempSync(join(tmpdir(), 'crystal-agents-'));
  const workspace = options.workspace ?? home;
  const base = fakeConfig(fake.baseUri, options.config ?? {}) as Config;
  if (options.models) {
    const entry = base.providers?.fake as { models: Record<string, unknown> } | undefined;
    if (entry) Object.assign(entry.models, options.models);
  }
  const controller = await SessionController.open({ home, workspace, config: base, env: {}, userHome: home, ...options.open });
  const events: ControllerEvent[] = [];
  controller.on((e) => {
    events.push(e);
    if (e.type === 'approval-requested') {
      const answer = options.approve ? options.approve(e) : 'once';
      if (answer) controller.answerApproval(e.prompt.id, answer);
    }
  });
  const bodies = () => fake.requests.filter((r) => r.path.endsWith('/chat/completions')).map((r) => r.body as WireBody);
  return {
    fake,
    controller,
    events,
    home,
    workspace,
    config: base,
    parentBodies: () => bodies().filter((b) => childPromptOf(b) === undefined),
    childBodies: (prompt) => bodies().filter((b) => childPromptOf(b) === prompt),
  };
}

export { until } from './helpers.js';

export const task = (id: string, prompt: string, subagent_type?: string) => ({
  id,
  name: 'task',
  arguments: { description: `job ${id}`, prompt, ...(subagent_type ? { subagent_type } : {}) },
});

/** The text the parent's request carries as the result of call `id`. */
export const toolResultText = (body: WireBody | undefined, id: string): string =>
  textOf(body?.messages.find((m) => m.role === 'tool' && m.tool_call_id === id));
