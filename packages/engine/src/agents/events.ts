/**
 * The events of child agents (AGENT-4). A child's own engine events reach the surfaces wrapped
 * in `agent-event` with the child's path, so a surface that does not know children never mixes
 * a child's text into the main answer; everything else the session publishes is `main`'s.
 */
import type { EngineEvent, StopReason } from '../events.js';

export type AgentEvent =
  | {
      readonly type: 'agent-started';
      /** The child's path, e.g. `main/explore#1`. */
      readonly agent: string;
      readonly profile: string;
      readonly description: string;
      /** The parent's `task` call this child answers. */
      readonly callId: string;
      /** The child's linked session (`sessions/children/<parent>/<id>.json`). */
      readonly childSessionId: string;
      readonly provider: string;
      readonly model: string;
    }
  | { readonly type: 'agent-event'; readonly agent: string; readonly event: EngineEvent }
  | {
      readonly type: 'agent-finished';
      readonly agent: string;
      readonly callId: string;
      readonly childSessionId: string;
      readonly stopReason: StopReason;
      /** The final answer handed to the parent (empty when the child stopped without one). */
      readonly answer: string;
      readonly modelCalls: number;
      readonly toolCalls: number;
    };

/** The agent path of any engine event: a child's for its wrapped and lifecycle events, else `main`. */
export function agentPathOf(event: { readonly type: string; readonly agent?: unknown }): string {
  return (event.type === 'agent-event' || event.type === 'agent-started' || event.type === 'agent-finished') &&
    typeof event.agent === 'string'
    ? event.agent
    : 'main';
}
