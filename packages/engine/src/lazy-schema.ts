/**
 * zod schemas built on their first use, not when their module loads (issue 22 item 4): every
 * module of the engine is loaded before `crystal run`'s first request, and building schemas (and
 * zod's English messages) there cost start-up time a turn that validates nothing does not need.
 * No engine module builds a schema or calls `z.config` at load; each builds through this.
 */
import en from 'zod/v4/locales/en.js';
import * as z from 'zod/mini';

let localeSet = false;

/** zod's English messages, set once before the first schema is built. */
function useLocale(): void {
  if (localeSet) return;
  z.config(en());
  localeSet = true;
}

/** A schema (or a set of them) built on the first call, then the same one. */
export function lazySchema<T>(build: () => T): () => T {
  let schema: T | undefined;
  return () => {
    useLocale();
    schema ??= build();
    return schema;
  };
}
