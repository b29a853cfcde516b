/** The scripting language of the fake provider: one `FakeReply` answers one request. */

export interface FakeToolCall {
  readonly id?: string;
  readonly name: string;
  /** Raw JSON string, or a value that is serialised. */
  readonly arguments: string | Record<string, unknown>;
  /** Split the argument string across this many chunks (default 2). */
  readonly chunks?: number;
}

export interface FakeError {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  /** JSON body; defaults to the wire's error envelope with `message`. */
  readonly body?: unknown;
  readonly message?: string;
}

export interface FakeReply {
  /** A string is split into word-sized deltas; an array gives the deltas exactly. */
  readonly text?: string | readonly string[];
  /** Generates this many `tok ` deltas (one token each) after `text`. */
  readonly textTokens?: number;
  readonly reasoning?: string | readonly string[];
  /** Opaque reasoning state the wire carries for replay (Anthropic thinking signature, Gemini thoughtSignature, Responses encrypted_content). */
  readonly reasoningSignature?: string;
  readonly toolCalls?: readonly FakeToolCall[];
  readonly usage?: { readonly input: number; readonly output: number; readonly reasoning?: number };
  /** The raw wire finish value. Default: the wire's tool-call value when there are tool calls, else its stop value. `null` sends no finish. */
  readonly finish?: string | null;
  /** Answer with an HTTP error instead of a stream. */
  readonly error?: FakeError;
  /** Destroy the connection after this many stream chunks (a stream cut mid-way). */
  readonly dropAfter?: number;
  /** Destroy the connection as soon as the request headers arrive, before the body is read. */
  readonly hangUpOnRequest?: boolean;
  /** Delay before each chunk, in milliseconds (a slow stream). */
  readonly delayMs?: number;
  /** Extra response headers on a successful stream. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Read the request, then never answer (no status line): a stalled provider. */
  readonly noAnswer?: boolean;
  /** Send the headers and this many stream chunks (0: headers only), then hold the connection open. */
  readonly stallAfter?: number;
  /** Write the stream one byte at a time, this many milliseconds apart (a trickling provider). */
  readonly trickleMs?: number;
  /** Answer with exactly this status, content type and body instead of the wire's encoding. */
  readonly raw?: { readonly status?: number; readonly contentType?: string; readonly body: string };
}

/** A script file for the standalone server. */
export interface FakeScript {
  readonly wire?: string;
  readonly replies: readonly FakeReply[];
  /** When the replies run out: repeat the last one (default) or answer 500. */
  readonly whenExhausted?: 'repeat-last' | 'error';
  /** What the model-list endpoint serves (SETUP-3). */
  readonly models?: readonly import('./models-endpoint.js').FakeModel[];
}

/** Splits text into word-sized deltas that keep every character. */
export function splitDeltas(value: string | readonly string[] | undefined): string[] {
  if (value === undefined) return [];
  if (typeof value !== 'string') return [...value];
  return value.match(/\s*\S+\s*|\s+/g) ?? [];
}

export function replyTextDeltas(reply: FakeReply): string[] {
  const deltas = splitDeltas(reply.text);
  for (let i = 0; i < (reply.textTokens ?? 0); i++) deltas.push('tok ');
  return deltas;
}

export function toolArguments(call: FakeToolCall): string {
  return typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
}

/** Splits a string into `n` nearly equal non-empty pieces (fewer if it is short). */
export function splitInto(value: string, n: number): string[] {
  if (value === '') return [''];
  const count = Math.max(1, Math.min(n, value.length));
  const size = Math.ceil(value.length / count);
  const pieces: string[] = [];
  for (let i = 0; i < value.length; i += size) pieces.push(value.slice(i, i + size));
  return pieces;
}
