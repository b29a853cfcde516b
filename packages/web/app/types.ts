/** The shapes the host sends (packages/web/src: conversation.ts, history-view.ts, page-events.ts). */
export interface ImageLimits {
  readonly maxImageBytes: number;
  readonly maxPixels: number;
  readonly maxImagesPerMessage: number;
  readonly maxBatchBytes: number;
}

export interface InputRegistry {
  readonly kinds: readonly string[];
  readonly message: {
    readonly maxTextChars: number;
    readonly imageTypes: readonly string[];
    readonly limits: ImageLimits;
    readonly imageInput: boolean;
  };
  readonly approvalAnswers: readonly ApprovalAnswer[];
}

export type ApprovalAnswer = 'once' | 'session' | 'always' | 'deny';

export interface ImageRef {
  readonly number: number;
  readonly name?: string;
  readonly available: boolean;
}

export type HistoryItem =
  | { readonly kind: 'user'; readonly text: string; readonly images: readonly ImageRef[] }
  | { readonly kind: 'assistant'; readonly text: string; readonly reasoning: string }
  | { readonly kind: 'tool-call'; readonly callId: string; readonly name: string; readonly arguments: string }
  | {
      readonly kind: 'tool-result';
      readonly callId: string;
      readonly name: string;
      readonly isError: boolean;
      readonly text: string;
      readonly images: readonly ImageRef[];
    };

export interface QueueItem {
  readonly id: number;
  readonly kind: 'message' | 'command';
  readonly text: string;
}

export interface ApprovalCard {
  readonly tool: string;
  readonly risk: string;
  readonly authority: string;
  readonly summary: string;
  readonly subject: string;
  readonly preview?: readonly string[];
}

export interface ApprovalPrompt {
  readonly id: number;
  readonly card: ApprovalCard;
  readonly choices: readonly ApprovalAnswer[];
}

export interface Question {
  readonly header: string;
  readonly question: string;
  readonly options: readonly { readonly label: string; readonly description?: string }[];
  readonly multiple: boolean;
  readonly custom: boolean;
}

export interface QuestionPrompt {
  readonly id: number;
  readonly questions: readonly Question[];
}

export type Activity = 'idle' | 'turn' | 'tool_batch' | 'compacting';

export interface PageState {
  readonly scope: string;
  readonly provider: string;
  readonly model: string;
  readonly workspace: string;
  readonly activity: Activity;
  readonly mode: 'plan' | 'work';
  readonly approvalMode: string;
  readonly queue: readonly QueueItem[];
  readonly approvals: readonly ApprovalPrompt[];
  readonly questions: readonly QuestionPrompt[];
  readonly inputs: InputRegistry;
  readonly history: readonly HistoryItem[];
}

/** One SSE message: the engine's event values, made JSON-safe by the host. */
export type PageEvent = { readonly type: string } & Readonly<Record<string, unknown>>;

export interface Refusal {
  readonly error: string;
  readonly kind?: string;
  readonly position?: number;
  readonly name?: string;
  readonly rule?: string;
  /** The session the host is on now (a 409 for a stale scope). */
  readonly scope?: string;
}
