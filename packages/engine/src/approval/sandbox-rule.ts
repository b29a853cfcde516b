/**
 * What the OS sandbox changes in approval (SBX-3), in one place: the card says whether a call
 * runs sandboxed; in `full` mode a sandboxed Privileged command inside the workspace (the
 * classifier asks about `chmod 777`, `kill -9`, `dd`, …) passes, since the sandbox contains it
 * (read-only system, own PID space, no capabilities, no network). Forbidden calls, calls outside
 * the workspace and Network calls still ask; a Network call the operator approves gets the
 * network for that one call.
 */
import type { Classification } from './classifier.js';

export interface SandboxFacts {
  /** Whether calls of this tool start a process in the OS sandbox (bash and exec tools while it is on). */
  covers(tool: string): boolean;
  /** The card's line for a tool that starts a process, e.g. `Sandboxed: workspace-write (bubblewrap), network off`; undefined otherwise. */
  cardLine(tool: string): string | undefined;
  /** The operator approved a Network call: it runs with the network. */
  grantNetwork(callId: string): void;
  /** Detects the sandbox before a call of this tool is decided (it runs on first use; issue 22 item 4). */
  prepare?(tool: string): Promise<void>;
}

/** `full` mode with the sandbox on: a Privileged command the sandbox contains passes without asking. */
export function sandboxContains(mode: string, classification: Classification, sandboxed: boolean): boolean {
  return (
    sandboxed && mode === 'full' && classification.risk === 'privileged' && classification.authority === 'privileged_escalation'
  );
}

/** An approved Network call of a sandboxed tool gets the network (Once, Session, Always or a grant). */
export function approvedNetwork(classification: Classification, sandboxed: boolean): boolean {
  return sandboxed && classification.authority === 'network';
}
