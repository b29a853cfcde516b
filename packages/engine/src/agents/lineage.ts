/**
 * Named call lineage (AGENT-4, CORE-6): which agent a piece of work belongs to. `main` is the
 * session's own turn; a child is its parent's path, `/`, the profile name and `#n`, counted per
 * profile in the parent session (`main/explore#1`, `main/general#2`). The path of the running
 * agent travels with the async work it starts, so an approval asked deep inside a child's tool
 * call is labelled with that child without threading the path through every signature.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export const MAIN_AGENT = 'main';

const scope = new AsyncLocalStorage<string>();

/** The agent whose work is running here (`main` outside any child). */
export function currentAgentPath(): string {
  return scope.getStore() ?? MAIN_AGENT;
}

/** Runs `work` as the agent `path`: everything it awaits sees that path. */
export function runAsAgent<T>(path: string, work: () => T): T {
  return scope.run(path, work);
}

export function childPath(parent: string, profile: string, n: number): string {
  return `${parent}/${profile}#${n}`;
}

/** The profile of a child path (`main/explore#2` → `explore`); undefined for `main`. */
export function profileOfPath(path: string): string | undefined {
  const last = path.split('/').at(-1) ?? '';
  const hash = last.lastIndexOf('#');
  return path.includes('/') && hash > 0 ? last.slice(0, hash) : undefined;
}
