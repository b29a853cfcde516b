/**
 * Child of save-hops.mjs: the first saves in a fresh process (as in `crystal run`: the user
 * message before the first request, then the committed round). Args: new|old HOME. Prints
 * `{ first, append }` in ms, each around the save alone. The thread pool is started first
 * (its first request spawns its threads, 2–12 ms on a busy VM): in `crystal run` the tools
 * folder listing started it well before the first save.
 */
import { promises as fs } from 'node:fs';

const [way, home] = process.argv.slice(2);
const store = way === 'new' ? '../../packages/engine/dist/session-store.js' : './baseline/session-store.mjs';
const { SessionFiles } = await import(new URL(store, import.meta.url).href);
const { benchState, timeTwoSaves } = await import(new URL('./save-state.mjs', import.meta.url).href);

const state = benchState(`20261201-000000-${way === 'new' ? 'aaaaaa' : 'bbbbbb'}`);
const files = SessionFiles.create(home, state.id);
await fs.stat(home);
const { first, append } = await timeTwoSaves(files, state);
process.stdout.write(`${JSON.stringify({ first, append })}\n`);
