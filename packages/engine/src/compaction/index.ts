export * from './estimate.js';
export * from './prune.js';
export * from './split.js';
export * from './serialise.js';
export * from './prompts.js';
export * from './compactor.js';
export * from './meter.js';
