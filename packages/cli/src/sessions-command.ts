/** `crystal sessions [--all] [--json]` (CLI-4) and `crystal export ID [--out FILE] [--agent PATH]` (CLI-5, AGENT-4). */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  describeFsError,
  listSessions,
  loadChild,
  loadConfig,
  requireSessionId,
  resolveHome,
  Session,
  UsageError,
} from '@crystal/engine';

function parse(argv: readonly string[], options: NonNullable<NonNullable<Parameters<typeof parseArgs>[0]>['options']>) {
  try {
    return parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(`${(error as Error).message}. Run 'crystal --help' for the commands.`);
  }
}

export async function sessionsCommand(argv: readonly string[]): Promise<number> {
  const { values } = parse(argv, {
    all: { type: 'boolean' },
    json: { type: 'boolean' },
    home: { type: 'string' },
    workspace: { type: 'string', short: 'w' },
  });
  const home = resolveHome(values.home as string | undefined);
  const workspace = resolve((values.workspace as string | undefined) ?? process.cwd());
  const sessions = await listSessions(home, values.all ? undefined : workspace);
  if (values.json) {
    process.stdout.write(`${JSON.stringify(sessions, null, 2)}\n`);
    return 0;
  }
  if (sessions.length === 0) {
    process.stdout.write(
      values.all ? 'No saved sessions.\n' : `No saved sessions in ${workspace}. Use --all for every workspace.\n`,
    );
    return 0;
  }
  for (const s of sessions) {
    const where = values.all ? `  ${s.workspace}` : '';
    process.stdout.write(
      `${s.id}  ${s.updatedUtc.slice(0, 19).replace('T', ' ')}  ${String(s.messageCount).padStart(4)} messages  ${s.title}${where}${s.note ? `  [damaged: ${s.note}]` : ''}\n`,
    );
  }
  return 0;
}

export async function exportCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(argv, { out: { type: 'string' }, home: { type: 'string' }, agent: { type: 'string' } });
  const id = positionals[0];
  if (!id)
    throw new UsageError('crystal export needs a session id: crystal export ID [--out FILE]. List ids with crystal sessions.');
  const home = resolveHome(values.home as string | undefined);
  // AGENT-4: a child agent's transcript, by its path (main/explore#1) or its id.
  if (typeof values.agent === 'string')
    return exportChild(home, requireSessionId(id), values.agent, values.out as string | undefined);
  const session = await Session.open({
    home,
    workspace: process.cwd(),
    config: loadConfig(home),
    resume: id,
    env: {},
    offline: true,
  });
  const json = await session.exportJsonWithImages();
  if (values.out) {
    try {
      writeFileSync(values.out as string, json);
    } catch (error) {
      throw describeFsError(error, 'write the export', resolve(values.out as string));
    }
    process.stderr.write(`Exported ${id} to ${values.out}\n`);
  } else process.stdout.write(json);
  return 0;
}

function exportChild(home: string, parentId: string, which: string, out: string | undefined): number {
  const { text } = loadChild(home, parentId, which);
  if (out) {
    try {
      writeFileSync(out, text);
    } catch (error) {
      throw describeFsError(error, 'write the export', resolve(out));
    }
    process.stderr.write(`Exported ${which} of ${parentId} to ${out}\n`);
  } else process.stdout.write(text);
  return 0;
}
