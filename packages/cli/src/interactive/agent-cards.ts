/**
 * Child agents in the terminal (AGENT-4): each `agent-started` opens a card, the child's own
 * events (wrapped in `agent-event` with its path) move that card only, and `agent-finished`
 * closes it with the answer. Nothing of a child reaches the main transcript's text.
 */
import { join } from 'node:path';
import { type ChildSummary, type ControllerEvent, savedChildCard, savedChildCards } from '@crystal/engine';
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
    if (this.saved?.sessionId !== parent) this.saved = { sessionId: parent, byCall: savedChildCards(this.home, parent) };
    const child = this.saved.byCall.get(callId);
    const saved = child ? savedChildCard(this.home, parent, child) : undefined;
    if (!saved) return undefined;
    const card = new AgentEntry({
      path: saved.path,
      profile: saved.profile,
      description: saved.description,
      model: saved.model,
      transcript: `${saved.transcriptFile} · ${saved.exportCommand}`,
    });
    for (const step of saved.steps) {
      card.addStep(step.callId, step.name, step.summary);
      if (step.state !== 'running') card.finishStep(step.callId, step.state);
    }
    card.finish(saved.state, saved.answer, saved.modelCalls, saved.toolCalls);
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
