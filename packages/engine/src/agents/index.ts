/** Sub-agents (AGENT-1..4, CORE-6): the one seam the session uses. */
export * from './child-store.js';
export * from './events.js';
export * from './lineage.js';
export * from './profiles.js';
export * from './runtime.js';
export * from './images.js';
export * from './saved-card.js';
