/**
 * Adapters decode one network read at a time into a batch of events; this flattens the
 * batches into the contract's `AsyncIterable<ChatEvent>` without an async-generator step per
 * event. Measured on a 20,000-token stream, a generator yield per event cost about as much as
 * JSON-parsing the events (bench/adapter-decode.mjs).
 */
import { abortError } from './http-error.js';

export function flattenBatches<T>(batches: AsyncGenerator<T[], void, undefined>, signal?: AbortSignal): AsyncIterable<T> {
  let buffer: T[] = [];
  let index = 0;
  const iterator: AsyncIterableIterator<T> = {
    [Symbol.asyncIterator]: () => iterator,
    async next(): Promise<IteratorResult<T>> {
      for (;;) {
        if (signal?.aborted) {
          await batches.return();
          throw abortError();
        }
        if (index < buffer.length) return { value: buffer[index++] as T, done: false };
        const next = await batches.next();
        if (next.done) return { value: undefined, done: true };
        buffer = next.value;
        index = 0;
      }
    },
    async return(): Promise<IteratorResult<T>> {
      await batches.return();
      return { value: undefined, done: true };
    },
  };
  return iterator;
}
