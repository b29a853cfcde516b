/**
 * `crystal checkpoints ID [--json]`, `crystal checkpoints gc [--json]` and
 * `crystal rewind ID --to N [--code] [--chat] [--force]` (CKPT-5): headless, for scripts and tests.
 */
import { parseArgs } from 'node:util';
import {
  collectGarbage,
  describe,
  describeRedo,
  loadConfig,
  readLog,
  resolveHome,
  Session,
  UsageError,
  checkpointLimitsOf,
} from '@crystal/engine';

function parse(argv: readonly string[], options: NonNullable<NonNullable<Parameters<typeof parseArgs>[0]>['options']>) {
  try {
    return parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(`${(error as Error).message}. Run 'crystal --help' for the commands.`);
  }
}

const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

export async function checkpointsCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(argv, {
    json: { type: 'boolean' },
    home: { type: 'string' },
    grace: { type: 'string' },
  });
  const home = resolveHome(values.home as string | undefined);
  const id = positionals[0];
  if (!id)
    throw new UsageError(
      'crystal checkpoints needs a session id (crystal checkpoints ID [--json]) or gc. List ids with crystal sessions.',
    );
  if (id === 'gc') {
    const grace = values.grace === undefined ? 600 : Number(values.grace);
    if (!Number.isFinite(grace) || grace < 0) throw new UsageError('--grace takes a number of seconds, 0 or more.');
    const report = await collectGarbage(home, { limits: checkpointLimitsOf(loadConfig(home)), graceMs: grace * 1000 });
    if (values.json) process.stdout.write(`${JSON.stringify(report)}\n`);
    else
      process.stdout.write(
        `Checkpoints: ${mb(report.bytesBefore)} stored in ${report.sessions} sessions; freed ${mb(report.freedBytes)} (${report.freedFiles} files, ${report.prunedTurns} turns pruned); ${mb(report.bytesAfter)} left.\n`,
      );
    return 0;
  }
  const log = await readLogOrFail(home, id);
  const turns = log.records
    .filter((r) => r.kind === 'turn')
    .map((t) => {
      const next = log.records.find((r) => r.kind === 'turn' && r.seq > t.seq)?.seq ?? Number.POSITIVE_INFINITY;
      const batches = log.records.filter((r) => r.kind === 'batch' && r.seq > t.seq && r.seq < next);
      return { t, batches };
    });
  if (values.json) {
    const out = {
      session: log.session,
      workspace: log.workspace,
      pruned: log.pruned ?? 0,
      turns: turns.map(({ t, batches }) => ({
        turn: t.kind === 'turn' ? t.turn : 0,
        at: t.at,
        text: t.kind === 'turn' ? t.text : '',
        superseded: t.kind === 'turn' ? t.superseded === true : false,
        batches: batches.map((b) =>
          b.kind === 'batch'
            ? {
                seq: b.seq,
                tools: b.tools,
                undone: b.undone === true,
                changes: b.changes.map((c) => ({
                  path: c.path,
                  before: c.before.kind,
                  after: c.after.kind,
                  ...(c.after.kind === 'unrestorable' ? { reason: c.after.reason } : {}),
                  ...(c.before.kind === 'unrestorable' ? { reason: c.before.reason } : {}),
                })),
              }
            : {},
        ),
      })),
      // Rewinds and undos as applied (what --redo takes back, newest not redone first).
      rewinds: log.records.flatMap((r) =>
        r.kind === 'rewind'
          ? [
              {
                seq: r.seq,
                turn: r.turn,
                at: r.at,
                files: r.changes.map((c) => c.path),
                chat: r.chat !== undefined,
                redone: r.redone === true,
              },
            ]
          : [],
      ),
    };
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    return 0;
  }
  process.stdout.write(`Checkpoints of ${log.session} (${log.workspace}):\n`);
  if (turns.length === 0) process.stdout.write('  none yet.\n');
  for (const { t, batches } of turns) {
    if (t.kind !== 'turn') continue;
    const files = new Set(batches.flatMap((b) => (b.kind === 'batch' ? b.changes.map((c) => c.path) : [])));
    const flags = `${t.superseded ? ' (rewound)' : ''}${batches.length > 0 && batches.every((b) => b.kind === 'batch' && b.undone) ? ' (code undone)' : ''}`;
    const text = t.text.replace(/\s+/g, ' ').trim();
    process.stdout.write(
      `${String(t.turn).padStart(4)}  ${t.at.slice(0, 19).replace('T', ' ')}  ${String(files.size).padStart(3)} files  ${text.length > 60 ? `${text.slice(0, 59)}…` : text}${flags}\n`,
    );
  }
  return 0;
}

async function readLogOrFail(home: string, id: string) {
  let log: Awaited<ReturnType<typeof readLog>>;
  try {
    log = await readLog(home, id);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (!log) throw new UsageError(`No checkpoints for session '${id}' in ${home}. List ids with crystal sessions.`);
  return log;
}

export async function rewindCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(argv, {
    to: { type: 'string' },
    code: { type: 'boolean' },
    chat: { type: 'boolean' },
    force: { type: 'boolean' },
    redo: { type: 'boolean' },
    json: { type: 'boolean' },
    home: { type: 'string' },
  });
  const id = positionals[0];
  const to = Number(values.to);
  const usage =
    'Usage: crystal rewind ID --to N [--code] [--chat] [--force] (N: 1 is the first user message), or crystal rewind ID --redo [--force].';
  if (values.redo && (values.to !== undefined || values.code || values.chat))
    throw new UsageError(`--redo takes back the last rewind; it takes no --to, --code or --chat. ${usage}`);
  if (!id || (!values.redo && (values.to === undefined || !Number.isInteger(to) || to < 1))) throw new UsageError(usage);
  const home = resolveHome(values.home as string | undefined);
  const log = await readLogOrFail(home, id);
  const both = !values.code && !values.chat;
  const code = both || values.code === true;
  const chat = both || values.chat === true;
  const session = await Session.open({
    home,
    workspace: log.workspace,
    config: loadConfig(home),
    resume: id,
    env: {},
    offline: true,
    offlineWriter: true,
    surface: 'crystal rewind',
  });
  const checkpoints = session.checkpoints;
  if (!checkpoints) throw new UsageError('Checkpoints are off (checkpoints.enabled is false in config.json).');
  if (values.redo) return redoHeadless(session, checkpoints, id, values.force === true, values.json === true);
  let result: Awaited<ReturnType<typeof checkpoints.rewind>>;
  try {
    result = await checkpoints.rewind(
      { to, code, chat, force: values.force === true },
      (context, n) => session.rewindConversation(context, n),
      () => session.conversationNow(),
    );
  } catch (error) {
    throw new UsageError((error as Error).message);
  } finally {
    session.release();
  }
  if (values.json) process.stdout.write(`${JSON.stringify(result)}\n`);
  const output = describe(
    result,
    code,
    chat,
    `crystal rewind ${id} --to ${to}${values.code ? ' --code' : ''}${values.chat ? ' --chat' : ''} --force`,
  );
  if (output.kind === 'error') {
    process.stderr.write(`crystal: ${output.text}\n`);
    return 1;
  }
  if (!values.json && output.kind === 'text')
    process.stdout.write(`${output.text.replace('; the message is back in the composer', '')}\n`);
  return 0;
}

/** `crystal rewind ID --redo [--force]`: takes back the last rewind or undo of the session. */
async function redoHeadless(
  session: Session,
  checkpoints: NonNullable<Session['checkpoints']>,
  id: string,
  force: boolean,
  json: boolean,
): Promise<number> {
  let result: Awaited<ReturnType<typeof checkpoints.redo>>;
  try {
    result = await checkpoints.redo({ force }, (context, n) => session.rewindConversation(context, n));
  } catch (error) {
    throw new UsageError((error as Error).message);
  } finally {
    session.release();
  }
  if (typeof result === 'string') {
    process.stderr.write(`crystal: ${result}\n`);
    return 1;
  }
  if (json) process.stdout.write(`${JSON.stringify(result)}\n`);
  const output = describeRedo(result, `crystal rewind ${id} --redo --force`);
  if (output.kind === 'error') {
    process.stderr.write(`crystal: ${output.text}\n`);
    return 1;
  }
  if (!json && output.kind === 'text') process.stdout.write(`${output.text}\n`);
  return 0;
}
