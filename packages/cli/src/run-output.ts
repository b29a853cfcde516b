/** Maps engine events onto stdout/stderr for `crystal run` in its three formats (CLI-2). */
import type { ControllerEvent, StopReason, TurnResult } from '@crystal/engine';
import type { RunFormat } from './run-options.js';
import { isoTime } from '@crystal/core';

export interface OutputStreams {
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stderr: NodeJS.WritableStream;
}

export function exitCodeFor(result: TurnResult): number {
  // REL-3: a turn that never reached the disk is a failure whatever the model did.
  if (result.saveError) return 2;
  return exitCodeForStop(result.stopReason, result.denied);
}

/** Exit codes of CLI-2: a failure, budget stop or interrupt outranks a denial. */
export function exitCodeForStop(stop: StopReason, denied: boolean): number {
  switch (stop) {
    case 'completed':
      return denied ? 4 : 0;
    case 'failed':
    case 'content_filtered':
      return 2;
    case 'interrupted':
      return 5;
    default:
      return 3;
  }
}

export function resultObject(result: TurnResult): Record<string, unknown> {
  return {
    sessionId: result.sessionId,
    stopReason: result.stopReason,
    text: result.text,
    usage: { inputTokens: result.usage.inputTokens, outputTokens: result.usage.outputTokens },
    modelCalls: result.modelCalls,
    toolCalls: result.toolCalls.map((c) => ({ name: c.name, arguments: c.arguments, status: c.status })),
    retries: result.retries,
    ...(result.error ? { error: result.error.message } : {}),
    ...(result.saveError ? { saved: false, saveError: result.saveError } : {}),
  };
}

export function resumeHint(sessionId: string): string {
  return `Session ${sessionId} saved. Continue it with: crystal run --resume ${sessionId}`;
}

export interface RunPrinter {
  onEvent(event: ControllerEvent): void;
  finish(result: TurnResult): void;
}

export function createPrinter(format: RunFormat, out: OutputStreams, showThinking: boolean, sessionId: string): RunPrinter {
  if (format === 'json') return jsonPrinter(out);
  if (format === 'stream-json') return streamJsonPrinter(out, showThinking, sessionId);
  return textPrinter(out, showThinking);
}

function jsonPrinter(out: OutputStreams): RunPrinter {
  return {
    onEvent(event) {
      if (event.type === 'retry-scheduled') {
        out.stderr.write(
          `retrying model request: ${event.message} (attempt ${event.attempt} in ${Math.ceil(event.delayMs / 1000)}s)\n`,
        );
      } else if (event.type === 'note') out.stderr.write(`${event.text}\n`);
    },
    finish(result) {
      out.stdout.write(`${JSON.stringify(resultObject(result))}\n`);
      if (result.error) out.stderr.write(`crystal: ${result.error.message}\n`);
      if (result.saveError) out.stderr.write(`crystal: session ${result.sessionId} was not saved: ${result.saveError.message}\n`);
    },
  };
}

function streamJsonPrinter(out: OutputStreams, showThinking: boolean, sessionId: string): RunPrinter {
  // AGENT-4: every line names the agent it comes from (`main`, or a child's path).
  let agent = 'main';
  const line = (type: string, fields: Record<string, unknown>): void => {
    out.stdout.write(`${JSON.stringify({ type, timestamp: isoTime(), sessionId, agent, ...fields })}\n`);
  };
  // The arguments of each call, for its `tool_use` line (the results name only the call id).
  const argumentsOf = new Map<string, string>();
  const printer: RunPrinter = {
    onEvent(event) {
      switch (event.type) {
        case 'agent-event': {
          const parent = agent;
          agent = event.agent;
          printer.onEvent(event.event);
          agent = parent;
          break;
        }
        case 'agent-started':
          line('agent_start', {
            child: event.agent,
            profile: event.profile,
            description: event.description,
            callId: event.callId,
            childSessionId: event.childSessionId,
            model: `${event.provider}/${event.model}`,
          });
          break;
        case 'agent-finished':
          line('agent_finish', {
            child: event.agent,
            callId: event.callId,
            childSessionId: event.childSessionId,
            stopReason: event.stopReason,
            modelCalls: event.modelCalls,
            toolCalls: event.toolCalls,
          });
          break;
        case 'tool-calls':
          for (const call of event.calls) argumentsOf.set(call.id, call.arguments);
          break;
        case 'text-delta':
          line('text', { text: event.text });
          break;
        case 'reasoning-delta':
          if (showThinking) line('reasoning', { text: event.text });
          break;
        case 'attempt-discarded':
          line('note', { text: 'The partial reply of the failed attempt is discarded.', discard: true, round: event.round });
          break;
        case 'retry-scheduled':
          line('retry', { attempt: event.attempt, delayMs: event.delayMs, reason: event.reason, message: event.message });
          break;
        case 'tool-results':
          for (const r of event.results) {
            line('tool_use', {
              callId: r.callId,
              name: r.name,
              arguments: argumentsOf.get(r.callId) ?? '',
              status: r.isError ? 'failure' : 'success',
              output: r.content.map((c) => (c.type === 'text' ? c.text : '')).join(''),
            });
          }
          break;
        case 'round-closed':
          line('step_finish', { reason: event.finish, ...(event.usage ? { usage: event.usage } : {}) });
          break;
        case 'note':
          line('note', { text: event.text });
          break;
        case 'error':
          line('error', { message: event.message, ...(event.kind ? { kind: event.kind } : {}) });
          break;
        default:
          break;
      }
    },
    finish(result) {
      line('result', resultObject(result));
    },
  };
  return printer;
}

/**
 * Plain text. On a terminal the reply streams as it arrives; into a pipe each round's text is
 * written once its stream completed, so a failed attempt's partial text never reaches stdout.
 */
function textPrinter(out: OutputStreams, showThinking: boolean): RunPrinter {
  const live = out.stdout.isTTY === true;
  let pending = '';
  let wroteText = false;
  let lastChar = '\n';
  const write = (value: string): void => {
    if (value === '') return;
    out.stdout.write(value);
    wroteText = true;
    lastChar = value.at(-1) as string;
  };
  // --show-thinking: reasoning goes to stderr under a label, closed with a newline.
  let thinking: 'closed' | 'open' = 'closed';
  let thinkingLast = '\n';
  const closeThinking = (): void => {
    if (thinking === 'closed') return;
    if (thinkingLast !== '\n') out.stderr.write('\n');
    thinking = 'closed';
  };
  return {
    onEvent(event) {
      if (event.type !== 'reasoning-delta' && event.type !== 'usage' && event.type !== 'session-saved') closeThinking();
      switch (event.type) {
        case 'text-delta':
          if (live) write(event.text);
          else pending += event.text;
          break;
        case 'reasoning-delta':
          if (!showThinking || event.text === '') break;
          if (thinking === 'closed') {
            out.stderr.write('[thinking] ');
            thinking = 'open';
          }
          out.stderr.write(event.text);
          thinkingLast = event.text.at(-1) as string;
          break;
        case 'attempt-discarded':
          pending = '';
          if (live && wroteText) write('\n[discarded: the attempt failed and is retried]\n');
          break;
        case 'round-closed':
          write(pending);
          pending = '';
          break;
        case 'retry-scheduled':
          out.stderr.write(
            `retrying model request: ${event.message} (attempt ${event.attempt} in ${Math.ceil(event.delayMs / 1000)}s)\n`,
          );
          break;
        case 'tool-calls':
          if (lastChar !== '\n') write('\n');
          for (const call of event.calls) write(`[${call.name}] ${truncate(call.arguments, 120)}\n`);
          break;
        case 'turn-started':
          // HOOK-1: a Stop hook's continuation is a second turn; its text starts on a new line.
          if (wroteText && lastChar !== '\n') write('\n');
          break;
        case 'tool-results':
          for (const r of event.results) {
            const text = r.content.map((c) => (c.type === 'text' ? c.text : `[image ${c.mime}]`)).join('');
            const { shown, hidden } = resultPreview(text);
            const head = shown.map((l) => `  ${truncate(l, 160)}`).join('\n');
            const more = hidden > 0 ? `\n  <${hidden} more lines>` : '';
            write(`(${r.isError ? 'failure' : 'success'})\n${head}${more}\n`);
          }
          break;
        case 'error':
          out.stderr.write(`crystal: ${event.message}\n`);
          break;
        case 'note':
          out.stderr.write(`${event.text}\n`);
          break;
        // AGENT-4: a child shows as one line when it starts and one when it stops; its own text stays in its transcript.
        case 'agent-started':
          if (lastChar !== '\n') write('\n');
          write(`[${event.agent}] ${truncate(event.description, 120)}\n`);
          break;
        case 'agent-finished':
          write(
            `(${event.agent}: ${event.stopReason}, ${plural(event.modelCalls, 'model call')}, ${plural(event.toolCalls, 'tool call')})\n`,
          );
          break;
        default:
          break;
      }
    },
    finish(result) {
      closeThinking();
      if (lastChar !== '\n') write('\n');
      if (result.stopReason !== 'completed') write(`[Stopped] ${result.stopReason}\n`);
      // REL-3: the failed save was reported on stderr (path and reason) as it happened.
      if (!result.saveError) write(`${resumeHint(result.sessionId)}\n`);
    },
  };
}

export const RESULT_HEAD_LINES = 4;
export const DIFF_CHANGED_LINES = 20;

/**
 * What text mode shows of a tool result: its first lines; for a unified diff (edit, write) the
 * lines before the diff and then the changed lines, not the `---`/`+++`/`@@` headers and the
 * context, so the change itself is on screen.
 */
export function resultPreview(text: string): { shown: string[]; hidden: number } {
  const lines = text.split('\n');
  const start = lines.findIndex((l, i) => l.startsWith('--- ') && lines[i + 1]?.startsWith('+++ '));
  if (start < 0) return { shown: lines.slice(0, RESULT_HEAD_LINES), hidden: Math.max(0, lines.length - RESULT_HEAD_LINES) };
  const changed = lines
    .slice(start + 2)
    .filter((l) => (l.startsWith('+') || l.startsWith('-')) && !l.startsWith('+++') && !l.startsWith('---'));
  const shown = [...lines.slice(0, start), ...changed.slice(0, DIFF_CHANGED_LINES)];
  const cut = lines.find((l) => l.startsWith('[diff cut:'));
  if (cut) shown.push(cut);
  return { shown, hidden: Math.max(0, changed.length - DIFF_CHANGED_LINES) };
}

function truncate(value: string, max: number): string {
  return value.length <= max ? value : `${value.slice(0, max)}…`;
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
