export * from './front-matter.js';
export * from './search-paths.js';
export * from './commands.js';
export * from './skills.js';
export * from './hooks.js';
export * from './lifecycle-hooks.js';
export * from './allowed-tools.js';
