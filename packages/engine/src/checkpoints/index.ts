/** Checkpoints and rewind (CKPT-1..6): the one seam the session, the controller and the CLI use. */
import type { Config } from '../config/schema.js';
import type { CheckpointLimits } from './tracker.js';

export * from './checkpoints.js';
export * from './commands.js';
export * from './gc.js';
export * from './log.js';
export * from './store.js';
export * from './tracker.js';

export function checkpointLimitsOf(config: Config): Partial<CheckpointLimits> {
  const c = config.checkpoints ?? {};
  return {
    ...(c.maxFileBytes !== undefined ? { maxFileBytes: c.maxFileBytes } : {}),
    ...(c.maxBinaryBytes !== undefined ? { maxBinaryBytes: c.maxBinaryBytes } : {}),
    ...(c.sessionCapBytes !== undefined ? { sessionCapBytes: c.sessionCapBytes } : {}),
    ...(c.globalCapBytes !== undefined ? { globalCapBytes: c.globalCapBytes } : {}),
  };
}
