/** Approval: classification, grants and the invocation policy (APPR-1..3, CORE-5). */
export * from './card.js';
export * from './classifier.js';
export * from './grants.js';
export * from './policy.js';
export * from './sandbox-rule.js';
export * from './grant-scope.js';
export * from './reviewer/index.js';
