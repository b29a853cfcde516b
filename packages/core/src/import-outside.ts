/**
 * `import()` of a module outside the bundle: a plugin file, a native addon. The bin compiles the
 * CLI bundle with V8's code cache (packages/cli/src/launch.ts), and on Node 20 a script compiled
 * from a cache has no dynamic-import hook (the call throws ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING),
 * so the bin lends its own `import()` under this symbol; everywhere else it is the plain one.
 */
export const IMPORT_OUTSIDE = Symbol.for('crystal.importOutside');

export function importOutside<T = Record<string, unknown>>(specifier: string): Promise<T> {
  const lent = (globalThis as { [IMPORT_OUTSIDE]?: (specifier: string) => Promise<unknown> })[IMPORT_OUTSIDE];
  return (lent ? lent(specifier) : import(specifier)) as Promise<T>;
}
