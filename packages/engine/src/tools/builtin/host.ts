/** What the built-in tools need from the session that owns them. */
import type { ToolContext } from '@crystal/core';
import type { Containment } from '../../containment.js';
import type { TodoStore } from './todo.js';

export interface QuestionOption {
  readonly label: string;
  readonly description: string;
}

export interface Question {
  readonly header: string;
  readonly question: string;
  readonly options: readonly QuestionOption[];
  /** Several options may be chosen. */
  readonly multiple: boolean;
  /** The user may type an answer of their own. */
  readonly custom: boolean;
}

/** One list of chosen labels (or typed answers) per question, in question order. */
export type QuestionAnswers = readonly (readonly string[])[];

export interface ToolHost {
  /** The workspace root; every relative path resolves against it (TOOLS-3). */
  readonly workspace: string;
  /** The per-command timer of `bash` (BASH-1); null disables it. */
  readonly bashTimeoutMs: number | null;
  /** The session's todo list (it belongs to the session, not to the mode). */
  readonly todos: TodoStore;
  /** Asks the user (`question`); absent means every question is dismissed, as in `crystal run`. */
  readonly ask?: (questions: readonly Question[], context: ToolContext) => Promise<QuestionAnswers | 'dismissed'>;
  /** Streams `bash` output as it arrives, for the surfaces, with the stream it came from. */
  readonly onOutput?: (callId: string, chunk: string, stream: 'stdout' | 'stderr') => void;
  /** Crystal Home: outside the fence even inside the workspace, its secrets refused (SEC-3). */
  readonly home?: string | undefined;
  /** The final path the approval policy checked for a call (SEC-4); the tool opens only that. */
  readonly checkedPath?: ((callId: string) => string | undefined) | undefined;
  /** ripgrep: a path, null for the built-in walker, undefined to look for `rg` on PATH. */
  readonly rgPath?: string | null;
  /** The environment `bash` children get, already scrubbed of keys (SEC-6); default `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
  /** The OS sandbox `bash` runs in (SBX-1); absent runs commands unsandboxed. */
  readonly containment?: Containment;
}
