/**
 * Calls to the host. The token lives in an HttpOnly cookie set by the first visit, so these
 * calls carry no secret of their own; the host also checks Origin and Host (WEBX-3).
 */
import type { ApprovalAnswer, PageEvent, PageState, Refusal } from './types.js';

export const INPUT_CONTENT_TYPE = 'application/x-crystal-input';

export class HostRefusal extends Error {
  constructor(
    readonly status: number,
    readonly refusal: Refusal,
  ) {
    super(refusal.error);
  }
}

async function answer<T>(response: Response): Promise<T> {
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = { error: text || `The host answered ${response.status}.` };
  }
  if (!response.ok) throw new HostRefusal(response.status, body as Refusal);
  return body as T;
}

export async function getState(): Promise<PageState> {
  return answer<PageState>(await fetch('/api/state', { credentials: 'same-origin' }));
}

export type Input =
  | { readonly kind: 'message'; readonly text: string }
  | { readonly kind: 'approval'; readonly id: number; readonly answer: ApprovalAnswer; readonly feedback?: string }
  | { readonly kind: 'question'; readonly id: number; readonly answers: readonly (readonly string[])[] | 'dismissed' }
  | { readonly kind: 'plan'; readonly mode: 'plan' | 'work' }
  | { readonly kind: 'queue'; readonly id: number; readonly action: 'remove' }
  | { readonly kind: 'queue'; readonly id: number; readonly action: 'edit'; readonly text: string };

/**
 * The input frame (packages/web/src/input-frame.ts): "CRB1", the manifest length, the manifest,
 * then the files themselves. The Blob references the files; their bytes are never copied here.
 */
export function inputFrame(scope: string, input: Input, files: readonly File[]): Blob {
  const images = files.map((f) => ({ name: f.name, type: f.type, size: f.size }));
  const manifest = new TextEncoder().encode(
    JSON.stringify({ scope, input: input.kind === 'message' ? { ...input, images } : input }),
  );
  const header = new Uint8Array(8);
  header.set([0x43, 0x52, 0x42, 0x31]);
  new DataView(header.buffer).setUint32(4, manifest.length);
  return new Blob([header, manifest, ...files]);
}

export interface SendResult {
  readonly images: readonly number[];
  readonly queued: boolean;
}

export async function send(scope: string, input: Input, files: readonly File[] = []): Promise<SendResult> {
  const response = await fetch('/api/send', {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'Content-Type': INPUT_CONTENT_TYPE },
    body: inputFrame(scope, input, files),
  });
  return answer<SendResult>(response);
}

export async function cancel(scope: string): Promise<boolean> {
  const response = await fetch('/api/cancel', {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ scope }),
  });
  return (await answer<{ cancelled: boolean }>(response)).cancelled;
}

export function mediaUrl(scope: string, number: number): string {
  return `/api/media/${number}?scope=${encodeURIComponent(scope)}`;
}

/** The event stream; EventSource reconnects by itself and the host starts each connection with a `state`. */
export function openEvents(
  onEvent: (event: PageEvent) => void,
  onStatus: (connected: boolean, state: number) => void,
): EventSource {
  const source = new EventSource('/api/events');
  source.onmessage = (message) => onEvent(JSON.parse(message.data as string) as PageEvent);
  source.onopen = () => onStatus(true, source.readyState);
  source.onerror = () => onStatus(false, source.readyState);
  return source;
}
