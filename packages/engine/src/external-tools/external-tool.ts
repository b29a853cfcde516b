/** An external tool as the session sees it: a core tool definition plus where it came from. */
import type { ToolDefinition } from '@crystal/core';
import type { ExternalToolFacts } from '../approval/classifier.js';
import type { Containment } from '../containment.js';
import type { ProjectCodeTrust } from '../trust.js';
import type { Catalog, DeclaredApproval, ToolSource } from './manifest.js';

export interface ExternalTool extends ToolDefinition {
  readonly set: string;
  readonly source: ToolSource;
  readonly runner: 'exec' | 'plugin' | 'mcp';
  readonly catalogs: readonly Catalog[];
  readonly declaredApproval: DeclaredApproval;
  /** What the approval classifier needs: path arguments and whether the tool is automatic. */
  readonly facts: ExternalToolFacts;
}

/** What every external tool is created with. */
export interface ExternalToolContext {
  /** The workspace root: the child's working directory and the fence root. */
  readonly workspace: string;
  /** `CRYSTAL_SESSION` for exec children. */
  readonly sessionId: () => string;
  /** `CRYSTAL_APPROVAL` for exec children: the current approval mode. */
  readonly approvalMode: () => string;
  /** Whether the current turn takes images (IMG-19); a function when `/model` can change it. */
  readonly imageInput: boolean | (() => boolean);
  /** The host environment the children inherit (default `process.env`). */
  readonly env?: NodeJS.ProcessEnv;
  /** Whether project sets may load here (SEC-1): every loader asks `mayRunProjectCode` with it. */
  readonly projectCode: ProjectCodeTrust;
  /** Grace between SIGTERM and SIGKILL when a tool is stopped (default 2000 ms). */
  readonly killGraceMs?: number;
  /** The OS sandbox exec tools run in (SBX-1); absent runs them unsandboxed. */
  readonly containment?: Containment;
}

export function acceptsImages(context: ExternalToolContext): boolean {
  return typeof context.imageInput === 'function' ? context.imageInput() : context.imageInput;
}

export function timeoutText(seconds: number): string {
  return `The tool timed out after ${seconds} seconds.`;
}

export const CANCELLED_TOOL_TEXT = 'The tool was cancelled.';
