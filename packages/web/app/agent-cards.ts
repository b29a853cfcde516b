/**
 * Child agents on the page (AGENT-4): each child is a labelled, collapsible card (a
 * `<details>`) with its own progress line and its steps; its answer shows when it stops. The
 * child's events arrive wrapped in `agent-event` with its path and never reach the main text.
 */
import { el } from './dom.js';
import type { PageEvent, SavedChildCard } from './types.js';

interface Card {
  readonly root: HTMLDetailsElement;
  readonly progress: HTMLElement;
  readonly steps: HTMLElement;
  readonly answer: HTMLElement;
  readonly rows: Map<string, HTMLElement>;
  modelCalls: number;
  toolCalls: number;
}

export class AgentCards {
  private readonly cards = new Map<string, Card>();

  constructor(
    private readonly root: HTMLElement,
    private readonly sessionId: () => string,
  ) {}

  /** Handles the agent events; false for every other event. */
  onEvent(event: PageEvent): boolean {
    const agent = String(event.agent ?? '');
    switch (event.type) {
      case 'agent-started': {
        const card = this.build(agent, String(event.description ?? ''), String(event.profile ?? ''), String(event.model ?? ''));
        card.root.classList.add('running');
        card.root.open = true;
        this.cards.set(agent, card);
        this.root.append(card.root);
        return true;
      }
      case 'agent-event':
        this.onChild(agent, (event.event ?? {}) as PageEvent);
        return true;
      case 'agent-finished': {
        const card = this.cards.get(agent);
        if (!card) return true;
        finish(
          card,
          String(event.stopReason ?? ''),
          Number(event.modelCalls),
          Number(event.toolCalls),
          String(event.answer ?? ''),
        );
        this.cards.delete(agent);
        return true;
      }
      default:
        return false;
    }
  }

  /** A reload (AGENT-4): the card of a finished child, rebuilt from its saved transcript, folded. */
  replay(saved: SavedChildCard): HTMLElement {
    const card = this.build(saved.path, saved.description, saved.profile, saved.model);
    for (const step of saved.steps) {
      card.steps.append(el('li', { class: `agent-step ${step.state}`, text: `${step.name} ${step.summary}` }));
    }
    finish(card, saved.state, saved.modelCalls, saved.toolCalls, saved.answer);
    return card.root;
  }

  private build(agent: string, description: string, profile: string, model: string): Card {
    const progress = el('p', { class: 'agent-progress', text: 'Waiting for the model' });
    const steps = el('ul', { class: 'agent-steps' });
    const answer = el('div', { class: 'agent-answer' });
    const root = el(
      'details',
      { class: 'agent-card', attrs: { 'data-agent': agent } },
      el(
        'summary',
        {},
        el('span', { class: 'agent-path', text: agent }),
        ` ${description} `,
        el('span', { class: 'agent-meta', text: `${profile} · ${model}` }),
      ),
      progress,
      steps,
      answer,
      el('p', { class: 'agent-transcript', text: `Transcript: crystal export ${this.sessionId()} --agent ${agent}` }),
    );
    return { root, progress, steps, answer, rows: new Map(), modelCalls: 0, toolCalls: 0 };
  }

  private onChild(agent: string, event: PageEvent): void {
    const card = this.cards.get(agent);
    if (!card) return;
    const counts = (): string => ` · ${plural(card.modelCalls, 'model call')} · ${plural(card.toolCalls, 'tool call')}`;
    switch (event.type) {
      case 'round-started':
        card.modelCalls++;
        card.progress.textContent = `Waiting for the model${counts()}`;
        break;
      case 'text-delta':
        card.progress.textContent = `Writing${counts()}`;
        break;
      case 'reasoning-delta':
        card.progress.textContent = `Thinking${counts()}`;
        break;
      case 'tool-calls':
        for (const call of (event.calls ?? []) as { id: string; name: string; arguments: string }[]) {
          card.toolCalls++;
          const row = el('li', { class: 'agent-step running', text: `${call.name} ${call.arguments}` });
          card.rows.set(call.id, row);
          card.steps.append(row);
        }
        card.progress.textContent = `Running tools${counts()}`;
        break;
      case 'tool-results':
        for (const result of (event.results ?? []) as { callId: string; isError: boolean }[]) {
          const row = card.rows.get(result.callId);
          row?.classList.remove('running');
          row?.classList.add(result.isError ? 'failed' : 'done');
        }
        break;
      default:
        break;
    }
  }
}

const plural = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? '' : 's'}`;

/** A stopped child: its outcome and counts on the progress line, its answer, folded away (its summary line stays). */
function finish(card: Card, stop: string, modelCalls: number, toolCalls: number, answer: string): void {
  card.root.classList.remove('running');
  card.root.classList.add(stop === 'completed' ? 'done' : 'stopped');
  card.progress.textContent = `${stop === 'completed' ? 'Done' : `Stopped: ${stop}`} · ${plural(modelCalls, 'model call')} · ${plural(toolCalls, 'tool call')}`;
  card.answer.textContent = answer;
  card.root.open = false;
}
