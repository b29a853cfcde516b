/**
 * The conversation as it happens (WEBX-1): the archive on (re)connect, then the live turn from
 * events: user messages with their images by display name (WEB-8), streamed Markdown text,
 * reasoning, tool cards with their output, notices for retries, notes, errors and stops. Text
 * from the model is rendered by markdown.ts, which escapes everything first.
 */
import { mediaUrl } from './api.js';
import { displayText, el } from './dom.js';
import { renderMarkdown } from './markdown.js';
import { StreamSplit } from './stream-split.js';
import { type DiffRowView, ToolCardView } from './tool-card.js';
import type { HistoryItem, ImageRef, PageEvent, SavedChildCard } from './types.js';

interface LiveBlock {
  readonly root: HTMLElement;
  readonly body: HTMLElement;
  readonly reasoningBody: HTMLElement;
  readonly reasoning: HTMLDetailsElement;
  text: string;
  thinking: string;
  /** While it streams: the frozen part (rendered once, chunk by chunk) and the live tail. */
  stream?: { readonly split: StreamSplit; readonly frozen: HTMLElement; readonly tail: HTMLElement; done: number };
}

/** How an approval answer reads on the card it belongs to. */
const RESOLVED: Readonly<Record<string, string>> = {
  once: 'Allowed once by you',
  session: 'Allowed by you for this session',
  always: 'Always allowed by you',
  deny: 'Denied by you',
  cancelled: 'Approval cancelled with the turn',
};

const REFERENCE_DEFINITION = /^ {0,3}\[[^\]\n]+\]:/m;

const TAGGED = /\u2063\[Image #([1-9][0-9]*)\]/g;

export class Transcript {
  private live: LiveBlock | undefined;
  private cards = new Map<string, ToolCardView>();
  /** Approval prompt id -> the tool call it is about (its card shows the answer). */
  private readonly approvals = new Map<number, string>();
  private pending = false;
  private readonly dirty = new Set<LiveBlock>();
  /** Display names of images this page sent, by number (the host's history carries them after a reload). */
  readonly names = new Map<number, string>();
  /** AGENT-4: renders a `task` call's saved child card after its tool card on a reload (agent-cards.ts). */
  renderAgent: ((card: SavedChildCard) => HTMLElement) | undefined;

  constructor(
    private readonly root: HTMLElement,
    private readonly scope: () => string,
  ) {
    root.addEventListener('click', (event) => {
      const button = (event.target as Element).closest?.('button.copy');
      if (button instanceof HTMLButtonElement) void copyCode(button);
    });
  }

  reset(history: readonly HistoryItem[]): void {
    this.live = undefined;
    this.dirty.clear();
    this.cards.clear();
    this.approvals.clear();
    this.root.replaceChildren();
    for (const item of history) this.appendItem(item);
    this.scrollToEnd(true);
  }

  private appendItem(item: HistoryItem): void {
    switch (item.kind) {
      case 'user':
        this.appendUser(item.text, item.images);
        return;
      case 'assistant': {
        const block = this.newBlock();
        block.text = item.text;
        block.thinking = item.reasoning;
        this.paint(block);
        this.live = undefined;
        return;
      }
      case 'tool-call':
        this.card(item.callId, item.name, item.arguments, item.summary);
        if (item.agent && this.renderAgent) this.root.append(this.renderAgent(item.agent));
        return;
      case 'tool-result':
        this.finishCard(item.callId, item.name, item.isError, item.text, item.diff);
        return;
    }
  }

  onEvent(event: PageEvent): void {
    const stuck = this.atEnd();
    switch (event.type) {
      case 'turn-started':
      case 'follow-up-sent': {
        const text = String(event.text ?? '');
        this.settle();
        this.appendUser(text, (event.images as ImageRef[] | undefined) ?? this.refsOf(text));
        break;
      }
      case 'round-started':
        this.settle();
        break;
      case 'text-delta':
        this.ensureBlock().text += String(event.text ?? '');
        this.schedulePaint();
        break;
      case 'reasoning-delta':
        this.ensureBlock().thinking += String(event.text ?? '');
        this.schedulePaint();
        break;
      case 'attempt-discarded':
        if (this.live) this.dirty.delete(this.live);
        this.live?.root.remove();
        this.live = undefined;
        break;
      case 'tool-calls':
        this.settle();
        for (const call of (event.calls ?? []) as { id: string; name: string; arguments: string; summary?: string }[]) {
          this.card(call.id, call.name, call.arguments, call.summary ?? '');
        }
        break;
      case 'tool-output':
        this.cards.get(String(event.callId))?.appendOutput(String(event.chunk ?? ''));
        break;
      case 'tool-results':
        for (const r of (event.results ?? []) as {
          callId: string;
          name: string;
          isError: boolean;
          text: string;
          diff?: DiffRowView[];
        }[]) {
          this.finishCard(r.callId, r.name, r.isError, r.text, r.diff);
        }
        break;
      case 'note':
        this.notice('note', String(event.text ?? ''));
        break;
      case 'error':
        this.notice('error', String(event.message ?? ''));
        break;
      case 'turn-finished': {
        const result = (event.result ?? {}) as { stopReason?: string; error?: { message?: string } };
        this.settle();
        if (result.stopReason && result.stopReason !== 'completed') {
          const why = result.error?.message ? `: ${result.error.message}` : '';
          this.notice(result.stopReason === 'interrupted' ? 'note' : 'error', `Turn stopped (${result.stopReason})${why}`);
        }
        break;
      }
      case 'compaction-started':
        this.notice('note', 'Compacting earlier context…');
        break;
      case 'compaction-finished':
        this.notice('note', `Compaction ${String(event.outcome)}.`);
        break;
      case 'command-output':
        this.commandOutput(String(event.command ?? ''), event.output as { kind: string; title?: string; text?: string });
        break;
      case 'approval-requested': {
        const prompt = event.prompt as { id: number; callId: string };
        this.approvals.set(prompt.id, prompt.callId);
        this.cards.get(prompt.callId)?.setStatus('waiting');
        break;
      }
      case 'approval-resolved': {
        // Folded into the card it belongs to (issue 19); a line of its own only without one.
        const answer = String(event.answer);
        const text = RESOLVED[answer] ?? answer;
        const card = this.cards.get(this.approvals.get(Number(event.id)) ?? '');
        this.approvals.delete(Number(event.id));
        if (!card) {
          this.notice('note', `Approval ${String(event.id)}: ${text}.`);
          break;
        }
        card.setApproval(text);
        card.setStatus(answer === 'deny' || answer === 'cancelled' ? 'denied' : 'running');
        break;
      }
      case 'auto-pass': {
        const auto = event.card as { tool: string; subject: string; reason: string };
        const card = [...this.cards.values()].find((c) => c.name === auto.tool && !c.finished && !c.hasApproval);
        if (card) card.setApproval(`Approved by ${auto.reason}`);
        else this.notice('note', `Approved by ${auto.reason}: ${auto.tool} ${auto.subject}`);
        break;
      }
      case 'mcp-changed':
        this.notice(
          'note',
          `MCP server ${String(event.server ?? '')} changed (its state, tools, prompts or resources); /mcp shows it.`,
        );
        break;
      default:
        return;
    }
    this.scrollToEnd(stuck);
  }

  private refsOf(text: string): ImageRef[] {
    const numbers = [...new Set([...text.matchAll(TAGGED)].map((m) => Number(m[1])))];
    return numbers.map((number) => ({ number, name: this.names.get(number), available: true }));
  }

  private appendUser(text: string, images: readonly ImageRef[]): void {
    const figures = images.map((image) => {
      const name = image.name ?? `Image ${image.number}`;
      return el(
        'figure',
        { class: 'message-image' },
        image.available
          ? el('img', { attrs: { src: mediaUrl(this.scope(), image.number), alt: name, loading: 'lazy' } })
          : el('span', { class: 'missing', text: 'unavailable' }),
        el('figcaption', { text: `[Image #${image.number}] ${image.name ?? ''}`.trim() }),
      );
    });
    this.root.append(
      el(
        'article',
        { class: 'message user', attrs: { 'aria-label': 'You' } },
        el('div', { class: 'user-text', text: displayText(text) }),
        figures.length > 0 ? el('div', { class: 'message-images' }, ...figures) : null,
      ),
    );
  }

  private newBlock(): LiveBlock {
    const body = el('div', { class: 'markdown' });
    const reasoningBody = el('div', { class: 'reasoning-text' });
    const reasoning = el('details', { class: 'reasoning' }, el('summary', { text: 'Reasoning' }), reasoningBody);
    reasoning.hidden = true;
    reasoning.open = true;
    const root = el('article', { class: 'message assistant', attrs: { 'aria-label': 'Assistant' } }, reasoning, body);
    this.root.append(root);
    const block: LiveBlock = { root, body, reasoning, reasoningBody, text: '', thinking: '' };
    this.live = block;
    return block;
  }

  private ensureBlock(): LiveBlock {
    return this.live ?? this.newBlock();
  }

  /** Paints changed blocks once per frame, however many deltas arrived. */
  private schedulePaint(): void {
    if (this.live) this.dirty.add(this.live);
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      const stuck = this.atEnd();
      for (const block of this.dirty) this.paintLive(block);
      this.dirty.clear();
      this.scrollToEnd(stuck);
    });
  }

  /** A whole message at once (the archive, or a streamed one once it is complete). */
  private paint(block: LiveBlock): void {
    block.stream = undefined;
    setHtml(block.body, renderMarkdown(displayText(block.text)));
    block.reasoning.hidden = block.thinking === '';
    block.reasoningBody.textContent = block.thinking;
  }

  /**
   * A streaming message: only the text since the last stable block boundary is rendered again
   * (stream-split.ts); the blocks before it were rendered once and stay as they are, so a frame
   * costs the same whether the message or the transcript is short or long.
   */
  private paintLive(block: LiveBlock): void {
    if (!block.stream) {
      const frozen = el('div', { class: 'frozen' });
      const tail = el('div', { class: 'tail' });
      block.body.replaceChildren(frozen, tail);
      block.stream = { split: new StreamSplit(), frozen, tail, done: 0 };
    }
    const stream = block.stream;
    const text = displayText(block.text);
    const cut = stream.split.advance(text);
    if (cut > stream.done) {
      const chunk = el('div', { class: 'chunk' });
      setHtml(chunk, renderMarkdown(text.slice(stream.done, cut)));
      stream.frozen.append(chunk);
      stream.done = cut;
    }
    setHtml(stream.tail, renderMarkdown(text.slice(stream.done)));
    block.reasoning.hidden = block.thinking === '';
    if (block.reasoningBody.textContent !== block.thinking) block.reasoningBody.textContent = block.thinking;
  }

  /**
   * The live message is complete. Its frozen blocks stay as they are; the tail gets its last
   * render. Only a message with reference definitions (`[x]: url`, which reach back to earlier
   * blocks) is rendered once more as a whole.
   */
  private settle(): void {
    const block = this.live;
    this.live = undefined;
    if (!block) return;
    const unpainted = this.dirty.delete(block);
    if (!block.stream || REFERENCE_DEFINITION.test(block.text)) {
      if (unpainted || block.stream) this.paint(block);
    } else if (unpainted) {
      this.paintLive(block);
    }
  }

  private card(callId: string, name: string, args: string, summary: string): ToolCardView {
    const existing = this.cards.get(callId);
    if (existing) return existing;
    const card = new ToolCardView(callId, name, args, summary);
    this.root.append(card.root);
    this.cards.set(callId, card);
    return card;
  }

  private finishCard(callId: string, name: string, isError: boolean, text: string, diff?: readonly DiffRowView[]): void {
    const card = this.cards.get(callId) ?? this.card(callId, name, '', '');
    card.finish(isError, text, diff);
  }

  private commandOutput(command: string, output: { kind: string; title?: string; text?: string }): void {
    if (output.kind === 'none') return;
    this.root.append(
      el(
        'section',
        { class: output.kind === 'error' ? 'command error' : 'command', attrs: { 'aria-label': `Output of ${command}` } },
        el('h3', { text: output.title ?? command }),
        el('pre', { text: output.text ?? '' }),
      ),
    );
  }

  /** The page's own help (issue 19): its keys, then the session's slash commands. */
  help(keys: readonly (readonly [string, string])[], commands: readonly { usage: string; summary: string }[]): void {
    const stuck = this.atEnd();
    const table = (rows: readonly (readonly [string, string])[]) =>
      el('dl', { class: 'help-list' }, ...rows.flatMap(([k, v]) => [el('dt', { text: k }), el('dd', { text: v })]));
    this.root.append(
      el(
        'section',
        { class: 'command help', attrs: { 'aria-label': 'Help' } },
        el('h3', { text: 'Keys in this page' }),
        table(keys),
        el('h3', { text: 'Commands' }),
        table(commands.map((c) => [c.usage, c.summary] as const)),
      ),
    );
    this.scrollToEnd(stuck);
  }

  notice(kind: 'note' | 'error' | 'retry', text: string): void {
    this.root.append(
      el('p', { class: `notice ${kind}`, text: displayText(text), attrs: kind === 'error' ? { role: 'alert' } : {} }),
    );
  }

  private atEnd(): boolean {
    const scroller = document.scrollingElement ?? document.documentElement;
    return scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 80;
  }

  private scrollToEnd(stuck: boolean): void {
    if (stuck) window.scrollTo({ top: document.documentElement.scrollHeight });
  }
}

/** Sanitized HTML in, plus a copy button on every code block. */
function setHtml(node: HTMLElement, html: string): void {
  node.innerHTML = html;
  // A table wider than the column scrolls sideways: it takes the focus, so the keyboard can scroll it.
  for (const table of node.querySelectorAll('table')) table.tabIndex = 0;
  for (const pre of node.querySelectorAll('pre')) {
    pre.append(el('button', { class: 'copy', text: 'Copy', attrs: { type: 'button', 'aria-label': 'Copy code' } }));
  }
}

/** Copies the code block the button sits in; the button says whether it worked. */
async function copyCode(button: HTMLButtonElement): Promise<void> {
  const code = button.parentElement?.querySelector('code')?.textContent ?? '';
  let ok = false;
  try {
    await navigator.clipboard.writeText(code);
    ok = true;
  } catch {
    const area = el('textarea', { attrs: { 'aria-hidden': 'true', class: 'offscreen' } });
    area.value = code;
    document.body.append(area);
    area.select();
    ok = document.execCommand('copy');
    area.remove();
  }
  button.textContent = ok ? 'Copied' : 'Copy failed';
  button.dataset.copied = ok ? 'true' : 'false';
}
