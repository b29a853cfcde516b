/**
 * `/rewind` and `/undo` (CKPT-3), for every surface through the command registry:
 *
 *   /rewind                         lists earlier user messages (and publishes `rewind-picker`
 *                                   so a surface may show a picker instead of the text)
 *   /rewind N [code|chat|both] [force]
 *                                   back to just before user message N (both by default); a
 *                                   conversation rewind publishes the message back for the composer
 *   /undo [force]                   the last turn's code
 *   /redo [force]                   takes back the last rewind or undo (files and conversation),
 *                                   until a new message is sent
 *
 * A conflict (a file changed since the checkpoint by someone else) is never overwritten: the
 * command answers with the list and the exact command that overwrites (CKPT-4).
 */
import type { CommandOutput } from '../commands/registry.js';
import type { Session } from '../session.js';
import type { RedoResult, RewindResult } from './checkpoints.js';

export async function checkpointCommand(
  session: Session,
  name: 'rewind' | 'undo' | 'redo',
  argument: string,
): Promise<CommandOutput> {
  const checkpoints = session.checkpoints;
  if (!checkpoints)
    return { kind: 'error', text: 'Checkpoints are off for this session (checkpoints.enabled is false in config.json).' };
  const words = argument
    .split(/\s+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase());
  const force = words.includes('force') || words.includes('--force');
  if (name === 'redo') {
    const result = await checkpoints.redo({ force }, (context, n) => session.rewindConversation(context, n));
    if (typeof result === 'string') return { kind: 'text', text: result };
    return answerRedo(session, result, '/redo force');
  }
  if (name === 'undo') {
    const turn = await checkpoints.lastUndoableTurn();
    if (turn === undefined) return { kind: 'text', text: 'Nothing to undo: no turn of this session changed a file.' };
    const result = await checkpoints.rewind({ to: turn, code: true, chat: false, force });
    return answer(session, result, true, false, '/undo force');
  }
  if (words.length === 0) {
    const entries = await checkpoints.entries();
    if (entries.length === 0) return { kind: 'text', text: 'No earlier messages to rewind to.' };
    checkpoints.options.publish?.({ type: 'rewind-picker', entries });
    const lines = entries.map(
      (e) =>
        `${String(e.turn).padStart(3)}  ${oneLine(e.text)}${e.files > 0 ? `  (${e.files} file${e.files === 1 ? '' : 's'} changed since)` : ''}`,
    );
    return {
      kind: 'text',
      title: 'Rewind',
      text: [...lines, '', 'Rewind with /rewind N [code|chat|both]: back to just before message N (both by default).'].join('\n'),
    };
  }
  const turn = Number(words[0]);
  const what = words.find((w) => w === 'code' || w === 'chat' || w === 'conversation' || w === 'both') ?? 'both';
  const unknown = words.slice(1).filter((w) => !['code', 'chat', 'conversation', 'both', 'force', '--force'].includes(w));
  if (!Number.isInteger(turn) || turn < 1 || unknown.length > 0)
    return { kind: 'error', text: 'Usage: /rewind N [code|chat|both] [force], N being a message number from /rewind.' };
  const code = what === 'code' || what === 'both';
  const chat = what === 'chat' || what === 'conversation' || what === 'both';
  const result = await checkpoints.rewind(
    { to: turn, code, chat, force },
    (context, n) => session.rewindConversation(context, n),
    () => session.conversationNow(),
  );
  return answer(session, result, code, chat, `/rewind ${turn} ${what} force`);
}

/** The command's text; a refusal is also published so a surface can ask "overwrite?" (CKPT-4). */
function answer(session: Session, result: RewindResult, code: boolean, chat: boolean, forceCommand: string): CommandOutput {
  if (!result.applied)
    session.checkpoints?.options.publish?.({
      type: 'rewind-conflict',
      turn: result.turn,
      conflicts: result.conflicts,
      force: forceCommand,
    });
  return describe(result, code, chat, forceCommand);
}

function answerRedo(session: Session, result: RedoResult, forceCommand: string): CommandOutput {
  if (!result.applied)
    session.checkpoints?.options.publish?.({
      type: 'rewind-conflict',
      turn: result.turn,
      conflicts: result.conflicts,
      force: forceCommand,
    });
  return describeRedo(result, forceCommand);
}

/** The text of a `/redo` (or `crystal rewind --redo`): what came back, or the files that stopped it. */
export function describeRedo(result: RedoResult, forceCommand: string): CommandOutput {
  if (!result.applied) {
    const n = result.conflicts.length;
    return {
      kind: 'error',
      text: [
        `Not redone: ${n === 1 ? 'a file was' : 'files were'} changed since the rewind, and ${n === 1 ? 'it is' : 'they are'} not overwritten without asking:`,
        ...result.conflicts.map((c) => `  ${c.path}: ${c.reason}`),
        `To overwrite ${n === 1 ? 'it' : 'them'}: ${forceCommand}`,
      ].join('\n'),
    };
  }
  const parts: string[] = [];
  if (result.code)
    parts.push(
      result.restored.length === 0
        ? 'no file needed restoring'
        : `restored ${result.restored.length} file${result.restored.length === 1 ? '' : 's'} (${result.restored.slice(0, 5).join(', ')}${result.restored.length > 5 ? ', …' : ''})`,
    );
  if (result.chat) parts.push('the conversation is back as it was before the rewind');
  const lines = [
    result.finishedJournal
      ? `Redone: an interrupted redo of the rewind to before message ${result.turn} was finished; ${parts.join('; ')}.`
      : `Redone: took back the rewind to before message ${result.turn}; ${parts.join('; ')}.`,
  ];
  for (const n of result.notRestorable) lines.push(`  ${n.path}: ${n.reason}`);
  return { kind: 'text', text: lines.join('\n') };
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 70 ? `${line.slice(0, 69)}…` : line;
}

export function describe(result: RewindResult, code: boolean, chat: boolean, forceCommand: string): CommandOutput {
  if (!result.applied) {
    const lines = result.conflicts.map((c) => `  ${c.path}: ${c.reason}`);
    return {
      kind: 'error',
      text: [
        `Not rewound: ${result.conflicts.length === 1 ? 'a file was' : 'files were'} changed since the checkpoint, and ${result.conflicts.length === 1 ? 'it is' : 'they are'} not overwritten without asking:`,
        ...lines,
        `To overwrite ${result.conflicts.length === 1 ? 'it' : 'them'} with the checkpoint: ${forceCommand}`,
      ].join('\n'),
    };
  }
  const parts: string[] = [];
  if (code)
    parts.push(
      result.restored.length === 0
        ? 'no file needed restoring'
        : `restored ${result.restored.length} file${result.restored.length === 1 ? '' : 's'} (${result.restored.slice(0, 5).join(', ')}${result.restored.length > 5 ? ', …' : ''})`,
    );
  if (chat) parts.push(`the conversation is back to before message ${result.turn}; the message is back in the composer`);
  const lines = [`Rewound to before message ${result.turn}: ${parts.join('; ')}.`];
  if (result.finishedJournal) lines.push('An interrupted restore was finished first.');
  for (const n of result.notRestorable) lines.push(`  ${n.path}: ${n.reason}`);
  return { kind: 'text', text: lines.join('\n') };
}
