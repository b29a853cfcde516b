/**
 * An incremental estimate of the model context for the per-round compaction decision
 * (COMPACT-1): message sizes are cached by identity and a running total follows the context as
 * it grows, so the decision costs the same at 10,000 items as at 100. A rewritten context
 * (compaction, /clear, resume) is measured again once.
 */
import type { ChatMessage } from '@crystal/core';
import { messageChars, tokensOfChars } from './estimate.js';

export class ContextMeter {
  private readonly sizes = new WeakMap<ChatMessage, number>();
  private seen: readonly ChatMessage[] | undefined;
  private length = 0;
  private first: ChatMessage | undefined;
  private last: ChatMessage | undefined;
  private chars = 0;

  /** The estimated tokens of `context` (chars / 4, as `estimateTokens`). */
  estimate(context: readonly ChatMessage[]): number {
    if (!this.extends(context)) {
      this.chars = 0;
      this.length = 0;
    }
    for (let i = this.length; i < context.length; i++) this.chars += this.size(context[i] as ChatMessage);
    this.seen = context;
    this.length = context.length;
    this.first = context[0];
    this.last = context.at(-1);
    return tokensOfChars(this.chars);
  }

  /** Forget the running total (the context was rewritten in place). */
  reset(): void {
    this.seen = undefined;
    this.length = 0;
    this.chars = 0;
  }

  /** Same array, same first and last-measured message: only appended since. */
  private extends(context: readonly ChatMessage[]): boolean {
    return (
      this.seen === context &&
      context.length >= this.length &&
      context[0] === this.first &&
      (this.length === 0 || context[this.length - 1] === this.last)
    );
  }

  private size(message: ChatMessage): number {
    let size = this.sizes.get(message);
    if (size === undefined) {
      size = messageChars(message);
      this.sizes.set(message, size);
    }
    return size;
  }
}
