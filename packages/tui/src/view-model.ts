/**
 * The display contract: the values the terminal shows, set by the host (the CLI maps engine
 * events onto them). The terminal never decides session state; it renders these and reports
 * input as intents (see intents.ts).
 */

export type Mode = 'plan' | 'work';

export interface StatusView {
  readonly mode: Mode;
  /** Approval mode label, e.g. `default`. */
  readonly approval: string;
  /** `provider/model`. */
  readonly model: string;
  readonly workspace: string;
  /** Context used, percent of the model window; undefined when the window is unknown. */
  readonly contextPercent?: number | undefined;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly queued: number;
}

/** The progress row (TUI-4). */
export type ProgressView =
  | {
      readonly kind: 'waiting' | 'thinking' | 'writing' | 'running' | 'approval' | 'question' | 'compacting';
      readonly since: number;
    }
  | { readonly kind: 'retrying'; readonly since: number; readonly dueAt: number; readonly attempt: number };

/** An approval card (APPR-2, APPR-3, reference §6.3/§6.5). */
export interface ApprovalView {
  readonly id: number;
  readonly tool: string;
  readonly risk: string;
  readonly authority: string;
  readonly summary: string;
  readonly subject: string;
  readonly preview?: readonly string[] | undefined;
  /** SBX-3: `Sandboxed: …` or `Not sandboxed: …` for a call that starts a process. */
  readonly sandbox?: string | undefined;
  /** What Session and Always cover (TUIX-12). */
  readonly grantScope?: string | undefined;
  /** REV-1: the reviewer's pending verdict (or why it failed), one line. */
  readonly reviewNote?: string | undefined;
  readonly choices: readonly ApprovalChoice[];
  /** AGENT-4: the child agent asking (`main/explore#1`); absent or `main` for the session's own calls. */
  readonly agent?: string | undefined;
}

export type ApprovalChoice = 'once' | 'session' | 'always' | 'deny';

export interface QuestionOptionView {
  readonly label: string;
  readonly description: string;
}

export interface QuestionItemView {
  readonly header: string;
  readonly question: string;
  readonly options: readonly QuestionOptionView[];
  readonly multiple: boolean;
  readonly custom: boolean;
}

export interface QuestionView {
  readonly id: number;
  readonly questions: readonly QuestionItemView[];
}

/** One side exchange of the `/btw` thread (BTW-7..10). */
export interface SideEntryView {
  readonly question: string;
  readonly answer: string;
  readonly state: 'waiting' | 'thinking' | 'streaming' | 'done' | 'failed';
  readonly error?: string | undefined;
}

/** What the session is doing, for the queue caption (QUEUE-3). */
export type QueuePhase = 'idle' | 'turn' | 'tool_batch' | 'compacting';

export interface QueueItemView {
  readonly kind: 'message' | 'command';
  readonly text: string;
}

export interface TodoView {
  readonly content: string;
  readonly status: 'pending' | 'in_progress' | 'completed' | 'cancelled';
}

/** A slash command for the picker (TUI-5). */
export interface PickerCommand {
  readonly name: string;
  readonly aliases: readonly string[];
  readonly usage: string;
  readonly summary: string;
  /** Completions for the argument typed so far. */
  readonly complete?: ((argument: string) => readonly string[] | Promise<readonly string[]>) | undefined;
}
