/** Home (`~/.crystal`, or `CRYSTAL_HOME`, or `--home`) and its layout (CONF-1). */
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

export function resolveHome(flag?: string, env: NodeJS.ProcessEnv = process.env): string {
  if (flag) return resolve(flag);
  if (env.CRYSTAL_HOME) return resolve(env.CRYSTAL_HOME);
  return join(homedir(), '.crystal');
}

export const homePaths = (home: string) => ({
  config: join(home, 'config.json'),
  credentials: join(home, 'credentials.json'),
  permissions: join(home, 'permissions.json'),
  sessions: join(home, 'sessions'),
  media: join(home, 'media'),
  logs: join(home, 'logs'),
  /** What is kept between starts to start faster (config/memo.ts); never the only copy of anything. */
  cache: join(home, 'cache'),
});
