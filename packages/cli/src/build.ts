import { homeConfigMemo, type ValidatedConfigMemo } from '@crystal/engine';

/**
 * The build this process runs: the main bundle's content hash, which the bin's launcher
 * (launch.ts) leaves for the bundle. Undefined when the CLI was not started by the bin (tests
 * that import its modules). What is kept between starts for one build only (the validated
 * configuration, engine `homeConfigMemo`) is named for it.
 */
export function currentBuild(): string | undefined {
  const build = (globalThis as Record<symbol, unknown>)[Symbol.for('crystal.build')];
  return typeof build === 'string' && /^[0-9a-f]{8,64}$/.test(build) ? build : undefined;
}

/**
 * The validated-configuration memo of this build in `home` (engine `homeConfigMemo`). The first
 * start of a build in a Home (after an install or an upgrade) validates `config.json` and keeps
 * the result; it marks itself one-off: the next start recalls the result and compiles none of the
 * validation (zod's schemas and checks), so this one's functions are not what later starts run,
 * and the bin leaves the code cache to a later start (launch.ts). Written now, the cache would
 * hold ~115 KB of validation code that every later start deserialises and never runs (1-2 ms of
 * each start here, bench/code-cache.mjs). Only the first: a start after an edit writes the cache
 * (a `config.json` rewritten before every start, as a script may, would otherwise leave every
 * start without one), and so does every start of a Home that cannot keep the memo.
 */
export function configMemo(home: string): ValidatedConfigMemo | undefined {
  const memo = homeConfigMemo(home, currentBuild());
  if (memo === undefined) return undefined;
  return {
    recall: (file, text) => memo.recall(file, text),
    remember(file, text, config, warnings) {
      const first = !memo.found;
      const kept = memo.remember(file, text, config, warnings);
      if (kept && first) (globalThis as Record<symbol, unknown>)[ONE_OFF_START] = true;
      return kept;
    },
  };
}

/** Set when this start did work the next start of the same build skips (launch.ts reads it). */
export const ONE_OFF_START = Symbol.for('crystal.oneOffStart');
