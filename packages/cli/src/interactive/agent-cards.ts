/**
 * Child agents in the terminal (AGENT-4): each `agent-started` opens a card, the child's own
 * events (wrapped in `agent-event` with its path) move that card only, and `agent-finished`
 * closes it with the answer. Nothing of a child reaches the main transcript's text.
 */
import { join } from 'node:path';
import { type ChildSummary, type ControllerEvent, listChildren, loadChild } from '@crystal/engine';
import { AgentEntry, type TerminalApp } from '@crystal/tui';
import { toolCard } from './tool-summary.js';

export class AgentCards {
  private readonly cards = new Map<string, AgentEntry>();

  constructor(
    private readonly app: TerminalApp,
    private readonly home: string,
    private readonly sessionId: () => string,
  ) {}

  /** Handles the agent events; false for every other event (the session view takes those). */
  onEvent(event: ControllerEvent): boolean {
    switch (event.type) {
      case 'agent-started': {
        const parent = this.sessionId();
        const card = new AgentEntry({
          path: event.agent,
          profile: event.profile,
          description: event.description,
          model: `${event.provider}/${event.model}`,
          transcript: `${join(this.home, 'sessions', 'children', parent, `${event.childSessionId}.json`)} · crystal export ${parent} --agent ${event.agent}`,
        });
        this.cards.set(event.agent, card);
        this.app.transcript.push(card);
        this.app.transcriptChanged();
        return true;
      }
      case 'agent-event':
        this.onChildEvent(event.agent, event.event);
        return true;
      case 'agent-finished': {
        const card = this.cards.get(event.agent);
        card?.finish(event.stopReason, event.answer, event.modelCalls, event.toolCalls);
        this.cards.delete(event.agent);
        this.app.transcriptChanged();
        return true;
      }
      case 'approval-requested':
        this.cards.get(event.prompt.agent)?.setActivity('approval');
        return false;
      case 'approval-resolved':
        return false;
      default:
        return false;
    }
  }

  private saved: { sessionId: string; byCall: Map<string, ChildSummary> } | undefined;

  /** Resume: the card of the child that answered the `task` call `callId`, rebuilt from its saved transcript. */
  replayCard(callId: string): AgentEntry | undefined {
    const parent = this.sessionId();
    if (this.saved?.sessionId !== parent)
      this.saved = { sessionId: parent, byCall: new Map(listChildren(this.home, parent).map((c) => [c.callId, c])) };
    const child = this.saved.byCall.get(callId);
    if (!child) return undefined;
    let record: ReturnType<typeof loadChild>['record'];
    try {
      record = loadChild(this.home, parent, child.id).record;
    } catch {
      return undefined;
    }
    const card = new AgentEntry({
      path: child.path,
      profile: child.profile,
      description: child.description,
      model: `${record.provider}/${record.model}`,
      transcript: `${join(this.home, 'sessions', 'children', parent, `${child.id}.json`)} · crystal export ${parent} --agent ${child.path}`,
    });
    let answer = '';
    for (const message of record.archive) {
      for (const part of message.content) {
        if (part.type === 'tool-call') {
          const data = toolCard(part);
          card.addStep(part.id, data.name, data.summary);
        } else if (part.type === 'tool-result') card.finishStep(part.callId, part.isError ? 'failed' : 'done');
      }
      if (message.role === 'assistant') {
        const text = message.content.map((p) => (p.type === 'text' ? p.text : '')).join('');
        if (text.trim() !== '') answer = text;
      }
    }
    // A child a crash cut off reads as interrupted (resume closes its call that way).
    const state = child.state === 'running' ? 'interrupted' : child.state;
    card.finish(state, state === 'completed' ? answer : '', record.modelCalls, record.toolCalls);
    return card;
  }

  /** The operator denied a child's call: its step shows it. */
  denied(agent: string | undefined, tool: string): boolean {
    const card = agent ? this.cards.get(agent) : undefined;
    if (!card) return false;
    card.denyRunning(tool);
    return true;
  }

  private onChildEvent(agent: string, event: ControllerEvent): void {
    const card = this.cards.get(agent);
    if (!card) return;
    switch (event.type) {
      case 'round-started':
        card.roundStarted();
        break;
      case 'reasoning-delta':
        card.setActivity('thinking');
        break;
      case 'text-delta':
        card.appendText(event.text);
        break;
      case 'tool-calls':
        for (const call of event.calls) {
          const data = toolCard(call);
          card.addStep(call.id, data.name, data.summary);
        }
        break;
      case 'tool-results':
        for (const result of event.results) card.finishStep(result.callId, result.isError ? 'failed' : 'done');
        break;
      case 'retry-scheduled':
        card.setActivity('waiting');
        break;
      default:
        return;
    }
    this.app.transcriptChanged();
  }
}
