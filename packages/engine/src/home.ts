/** Home (`~/.crystal`, or `CRYSTAL_HOME`, or `--home`) and its layout (CONF-1). */
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

export function resolveHome(flag?: string, env: NodeJS.ProcessEnv = process.env): string {
  if (flag) return resolve(flag);
  if (env.CRYSTAL_HOME) return resolve(env.CRYSTAL_HOME);
  return join(homedir(), '.crystal');
}

export interface HomePaths {
  readonly config: string;
  readonly credentials: string;
  readonly permissions: string;
  readonly sessions: string;
  readonly media: string;
  readonly logs: string;
  /** What is kept between starts to start faster (config/memo.ts); never the only copy of anything. */
  readonly cache: string;
}

/** The last Home's paths: a start asks for them dozens of times (every save, lock and memo), seven joins each (issue 22). */
let last: { readonly home: string; readonly paths: HomePaths } | undefined;

export function homePaths(home: string): HomePaths {
  if (last?.home === home) return last.paths;
  const paths: HomePaths = Object.freeze({
    config: join(home, 'config.json'),
    credentials: join(home, 'credentials.json'),
    permissions: join(home, 'permissions.json'),
    sessions: join(home, 'sessions'),
    media: join(home, 'media'),
    logs: join(home, 'logs'),
    cache: join(home, 'cache'),
  });
  last = { home, paths };
  return paths;
}
