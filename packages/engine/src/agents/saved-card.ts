/**
 * What a surface shows for a finished child agent after a resume or a page reload (AGENT-4):
 * the card rebuilt from the child's saved transcript. One rule for the terminal and the page:
 * the steps are its tool calls with their outcome, the answer is its last assistant text, and a
 * child a crash cut off (still `running` on disk) reads as interrupted, as resume closes its call.
 */
import { toolSummaryOf } from '../tool-summary.js';
import { type ChildSummary, childPathOnDisk, listChildren, loadChild } from './child-store.js';

export interface SavedChildStep {
  readonly callId: string;
  readonly name: string;
  readonly summary: string;
  readonly state: 'running' | 'done' | 'failed';
}

export interface SavedChildCard {
  readonly callId: string;
  readonly path: string;
  readonly profile: string;
  readonly description: string;
  readonly model: string;
  readonly state: string;
  /** The child's final answer; empty unless it completed. */
  readonly answer: string;
  readonly modelCalls: number;
  readonly toolCalls: number;
  readonly steps: readonly SavedChildStep[];
  /** Where the transcript is, and the command that exports it. */
  readonly transcriptFile: string;
  readonly exportCommand: string;
}

/** The card of one saved child; undefined when its file cannot be read. */
export function savedChildCard(home: string, parentSessionId: string, child: ChildSummary): SavedChildCard | undefined {
  let record: ReturnType<typeof loadChild>['record'];
  try {
    record = loadChild(home, parentSessionId, child.id).record;
  } catch {
    return undefined;
  }
  const steps = new Map<string, SavedChildStep>();
  let answer = '';
  for (const message of record.archive) {
    for (const part of message.content) {
      if (part.type === 'tool-call') {
        steps.set(part.id, {
          callId: part.id,
          name: part.name,
          summary: toolSummaryOf(part.name, part.arguments),
          state: 'running',
        });
      } else if (part.type === 'tool-result') {
        const step = steps.get(part.callId);
        if (step) steps.set(part.callId, { ...step, state: part.isError ? 'failed' : 'done' });
      }
    }
    if (message.role === 'assistant') {
      const text = message.content.map((p) => (p.type === 'text' ? p.text : '')).join('');
      if (text.trim() !== '') answer = text;
    }
  }
  const state = child.state === 'running' ? 'interrupted' : child.state;
  return {
    callId: child.callId,
    path: child.path,
    profile: child.profile,
    description: child.description,
    model: `${record.provider}/${record.model}`,
    state,
    answer: state === 'completed' ? answer : '',
    modelCalls: record.modelCalls,
    toolCalls: record.toolCalls,
    steps: [...steps.values()],
    transcriptFile: childPathOnDisk(home, parentSessionId, child.id),
    exportCommand: `crystal export ${parentSessionId} --agent ${child.path}`,
  };
}

/** Every saved child of a parent session by the `task` call it answered (a later child of the same call wins). */
export function savedChildCards(home: string, parentSessionId: string): Map<string, ChildSummary> {
  return new Map(listChildren(home, parentSessionId).map((c) => [c.callId, c]));
}
