/** Content parts and messages of the chat contract. Values only: no I/O here. */

export interface TextPart {
  readonly type: 'text';
  readonly text: string;
}

/**
 * An image: inline bytes (`data`, base64) with their MIME type, or an absolute `uri`.
 * `attachmentId` and `name` are set when the image came from the media store.
 */
export interface ImagePart {
  readonly type: 'image';
  readonly mime: string;
  readonly data?: string;
  readonly uri?: string;
  readonly attachmentId?: string;
  readonly name?: string;
}

/** Model reasoning. `state` carries opaque provider data kept for replay (signatures, encrypted content). */
export interface ReasoningPart {
  readonly type: 'reasoning';
  readonly text: string;
  readonly state?: ProviderState;
}

/** Opaque provider state: which wire wrote it and its payload. Only that wire reads it back. */
export interface ProviderState {
  readonly format: string;
  readonly data: string;
}

export interface ToolCallPart {
  readonly type: 'tool-call';
  readonly id: string;
  readonly name: string;
  /** The raw JSON argument string exactly as the model produced it. */
  readonly arguments: string;
  readonly state?: ProviderState;
}

export type ToolResultContent = TextPart | ImagePart;

export interface ToolResultPart {
  readonly type: 'tool-result';
  readonly callId: string;
  readonly name: string;
  readonly content: readonly ToolResultContent[];
  readonly isError: boolean;
}

export type ContentPart = TextPart | ImagePart | ReasoningPart | ToolCallPart | ToolResultPart;

export type Role = 'system' | 'user' | 'assistant' | 'tool';

export interface ChatMessage {
  readonly role: Role;
  readonly content: readonly ContentPart[];
}

export const text = (value: string): TextPart => ({ type: 'text', text: value });

export function userMessage(value: string | readonly ContentPart[]): ChatMessage {
  return { role: 'user', content: typeof value === 'string' ? [text(value)] : value };
}

export function systemMessage(value: string): ChatMessage {
  return { role: 'system', content: [text(value)] };
}

/** The concatenated text parts of a message (reasoning and tool parts excluded). */
export function messageText(message: ChatMessage): string {
  let out = '';
  for (const part of message.content) if (part.type === 'text') out += part.text;
  return out;
}
