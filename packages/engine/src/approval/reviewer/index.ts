/** The approval reviewer (REV-1, REV-2): excerpt, prompt, reply parsing, the request and which model reviews. */
export * from './approval-model.js';
export * from './excerpt.js';
export * from './parse.js';
export * from './prompt.js';
export * from './reviewer.js';
