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
