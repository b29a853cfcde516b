/**
 * Every write in Home is temp file + fsync + atomic rename: a file is never half-written. The
 * writes themselves, in two thread-pool round trips, are in durable-files.ts (issue 22).
 */
export { writeFileAtomic } from './durable-files.js';
