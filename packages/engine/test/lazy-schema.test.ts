/**
 * Issue 22 item 4: no engine module builds a zod schema or sets zod's messages when it loads
 * (every module is loaded before `crystal run`'s first request); they are built on first use
 * (lazy-schema.ts), with the English messages set before the first one.
 */
import * as z from 'zod/mini';
import { describe, expect, it } from 'vitest';

describe('issue 22 item 4: zod schemas are built on first use', () => {
  it('issue 22 item 4 loading every engine module leaves zod untouched; the first validation sets its English messages', async () => {
    expect(z.config().localeError).toBeUndefined();
    const engine = await import('../src/index.js');
    expect(z.config().localeError).toBeUndefined();
    // The first schema built (a config section here) sets the messages, and they name what is expected.
    expect(() => engine.parseConfigText('{"retry": {"maxRetries": "two"}}', '/h/config.json')).toThrow(
      /retry\.maxRetries: expected number, received string/,
    );
    expect(z.config().localeError).toBeTypeOf('function');
  });
});
