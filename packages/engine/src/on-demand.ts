/**
 * Code a plain turn never runs, loaded by `import()` on first use (issue 22 item 4): the bundle
 * keeps each in a chunk of its own, so `crystal run` and the terminal's first frame do not load
 * it. The barrel (`index.ts`) must not re-export these modules, or every command would load them.
 */

/** `/rewind`, `/undo`, `/redo` and the texts `crystal rewind` prints (CKPT-3..5). */
export const checkpointCommands = (): Promise<typeof import('./checkpoints/commands.js')> => import('./checkpoints/commands.js');

/** The checkpoint sweep (CKPT-2): `crystal checkpoints gc` and the daily prune. */
export const checkpointGc = (): Promise<typeof import('./checkpoints/gc.js')> => import('./checkpoints/gc.js');
