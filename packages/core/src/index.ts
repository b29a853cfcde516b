export * from './content.js';
export * from './events.js';
export * from './provider-error.js';
export * from './client.js';
export * from './tools.js';
export * from './limits.js';
export * from './import-outside.js';
export * from './lazy-builtin.js';
