/**
 * Child agents on the page (AGENT-4): each child is a labelled, collapsible card (a
 * `<details>`) with its own progress line and its steps; its answer shows when it stops. The
 * child's events arrive wrapped in `agent-event` with its path and never reach the main text.
 */
import { el } from './dom.js';
import type { PageEvent } from './types.js';

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
        const progress = el('p', { class: 'agent-progress', text: 'Waiting for the model' });
        const steps = el('ul', { class: 'agent-steps' });
        const answer = el('div', { class: 'agent-answer' });
        const root = el(
          'details',
          { class: 'agent-card running', attrs: { 'data-agent': agent, open: '' } },
          el(
            'summary',
            {},
            el('span', { class: 'agent-path', text: agent }),
            ` ${String(event.description ?? '')} `,
            el('span', { class: 'agent-meta', text: `${String(event.profile ?? '')} · ${String(event.model ?? '')}` }),
          ),
          progress,
          steps,
          answer,
          el('p', {
            class: 'agent-transcript',
            text: `Transcript: crystal export ${this.sessionId()} --agent ${agent}`,
          }),
        );
        this.cards.set(agent, { root, progress, steps, answer, rows: new Map(), modelCalls: 0, toolCalls: 0 });
        this.root.append(root);
        return true;
      }
      case 'agent-event':
        this.onChild(agent, (event.event ?? {}) as PageEvent);
        return true;
      case 'agent-finished': {
        const card = this.cards.get(agent);
        if (!card) return true;
        const stop = String(event.stopReason ?? '');
        card.root.classList.remove('running');
        card.root.classList.add(stop === 'completed' ? 'done' : 'stopped');
        card.progress.textContent = `${stop === 'completed' ? 'Done' : `Stopped: ${stop}`} · ${plural(Number(event.modelCalls), 'model call')} · ${plural(Number(event.toolCalls), 'tool call')}`;
        card.answer.textContent = String(event.answer ?? '');
        // A finished child folds away; its summary line stays.
        card.root.open = false;
        this.cards.delete(agent);
        return true;
      }
      default:
        return false;
    }
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
