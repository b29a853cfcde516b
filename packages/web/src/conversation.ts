/**
 * The conversation face the Web host exposes (WEB-11): the input registry plus scoped `send`,
 * `cancel` and `history`. A scope is the session id the page shows; an input for another scope
 * is refused, so a page left open across `/clear` or `/resume` never writes into the wrong
 * session. Draft and historical-image handling stay inside: the page only ever sends a whole
 * message.
 *
 * A message's images go through the session's attachment seam, the same one the terminal uses
 * (WEB-10): `attachBatch` validates every member without storage and only then saves them in
 * submitted order (WEB-3); the text is then sent with a tagged marker per image, in order.
 */
import {
  catalogOf,
  listSessions,
  type Activity,
  type ApprovalPrompt,
  type AttachmentService,
  ImageError,
  type QueueItem,
  type QuestionPrompt,
  type SessionController,
  imageMarker,
  isCommand,
  type MarkerSpan,
  savedChildCard,
  savedChildCards,
} from '@crystal/engine';
import { type HistoryItem, historyView, type ImageRef, imageRefs } from './history-view.js';
import { type ConversationInput, displayName, type ImageEntry, type InputRegistry, inputRegistry } from './input-registry.js';
import { bodyLimitFor } from './input-frame.js';
import { type PageEvent, toPageEvent } from './page-events.js';

/** Everything the page needs to draw itself after (re)connecting. */
export interface PageState {
  readonly scope: string;
  readonly provider: string;
  readonly model: string;
  readonly workspace: string;
  readonly activity: Activity;
  readonly mode: 'plan' | 'work';
  readonly approvalMode: string;
  readonly queue: readonly QueueItem[];
  readonly approvals: readonly ApprovalPrompt[];
  readonly questions: readonly QuestionPrompt[];
  readonly inputs: InputRegistry;
  readonly history: readonly HistoryItem[];
}

/** What the page's controls show (GET /api/controls). */
export interface PageControls {
  readonly scope: string;
  readonly mode: 'plan' | 'work';
  readonly approvalMode: string;
  readonly provider: string;
  readonly model: string;
  readonly models: readonly { readonly provider: string; readonly model: string }[];
  readonly contextPercent: number | null;
  readonly contextWindow: number | null;
  /** The slash commands this session takes (the page's /help lists them with its own keys). */
  readonly commands: readonly { readonly usage: string; readonly summary: string }[];
  readonly sessions: readonly {
    readonly id: string;
    readonly title: string;
    readonly updatedUtc: string;
    readonly messageCount: number;
    readonly note?: string;
  }[];
}

/** A refusal with the HTTP status the host answers with. */
export class ConversationError extends Error {
  override readonly name = 'ConversationError';
  constructor(
    readonly status: 400 | 409 | 422,
    message: string,
    readonly detail: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
  }
}

export interface SendResult {
  /** Image numbers given to the batch, in submitted order. */
  readonly images: readonly number[];
  /** True when the message waits in the queue behind a running turn. */
  readonly queued: boolean;
}

/**
 * The public face (WEB-11): the input registry and the scoped verbs. Everything else on
 * `Conversation` (events, the page snapshot, stored image bytes, early validation) serves the
 * host's own routes.
 */
export interface ConversationFace {
  inputs(): InputRegistry;
  send(scope: string, input: ConversationInput, payload: Buffer): Promise<SendResult>;
  cancel(scope: string): boolean;
  history(scope: string): Promise<HistoryItem[]>;
}

export class Conversation implements ConversationFace {
  constructor(private readonly controller: SessionController) {}

  /** The attachment seam of the session now open (WEB-10). */
  private get attachments(): AttachmentService {
    const own = (this.controller as { attachments?: AttachmentService }).attachments;
    return own ?? this.controller.session.attachments;
  }

  get scope(): string {
    return this.controller.session.id;
  }

  inputs(): InputRegistry {
    return inputRegistry(this.attachments.limits, this.controller.session.imageInput);
  }

  /** The most a `send` body may hold: derived from the aggregate image limit in force now (WEB-4). */
  bodyLimit(): number {
    return bodyLimitFor(this.attachments.limits.maxBatchBytes);
  }

  /**
   * Page events in the controller's order. A user message (`turn-started`, `follow-up-sent`)
   * also carries its images by number and display name (WEB-8), looked up as it arrives.
   */
  on(listener: (event: PageEvent) => void): () => void {
    let tail: Promise<void> = Promise.resolve();
    return this.controller.on((event) => {
      const page = toPageEvent(event);
      const refs = event.type === 'turn-started' || event.type === 'follow-up-sent' ? this.imageRefs(event.text) : undefined;
      tail = tail
        .then(async () => listener(refs ? { ...page, images: await refs } : page))
        .catch((error: unknown) => {
          process.stderr.write(`crystal web: an event was not delivered: ${String(error)}\n`);
        });
    });
  }

  private imageRefs(text: string): Promise<ImageRef[]> {
    return imageRefs(text, this.attachments.registry);
  }

  async state(): Promise<PageState> {
    const c = this.controller;
    const s = c.session;
    return {
      scope: s.id,
      provider: s.provider,
      model: s.model,
      workspace: s.workspace,
      activity: c.activity,
      mode: c.mode,
      approvalMode: c.approvalMode,
      queue: c.queue,
      approvals: c.pendingApprovals,
      questions: c.pendingQuestions,
      inputs: this.inputs(),
      history: await this.history(s.id),
    };
  }

  /** The header's controls (issue 19): mode, approval mode, model and its choices, context use, saved sessions. */
  async controls(): Promise<PageControls> {
    const c = this.controller;
    const s = c.session;
    const catalog = catalogOf(s.openOptions.config);
    const models = Object.entries(catalog).flatMap(([provider, entry]) =>
      Object.keys(entry.models).map((model) => ({ provider, model })),
    );
    const sessions = await listSessions(s.home, s.workspace).catch(() => []);
    return {
      scope: s.id,
      mode: c.mode,
      approvalMode: c.approvalMode,
      provider: s.provider,
      model: s.model,
      models,
      contextPercent: s.contextPercent() ?? null,
      contextWindow: s.modelInfo.contextWindow ?? null,
      commands: c.commands().map((x) => ({ usage: x.usage, summary: x.summary })),
      sessions: sessions.slice(0, 50).map((x) => ({
        id: x.id,
        title: x.title,
        updatedUtc: x.updatedUtc,
        messageCount: x.messageCount,
        ...(x.note ? { note: x.note } : {}),
      })),
    };
  }

  /** The last event a page hears when the host stops: which session ended, and whether it has anything to resume. */
  farewell(): PageEvent {
    const s = this.controller.session;
    return { type: 'host-stopped', sessionId: s.id, resumable: s.history().length > 0 };
  }

  async history(scope: string): Promise<HistoryItem[]> {
    this.checkScope(scope);
    const s = this.controller.session;
    const items = await historyView(s.history(), this.attachments.registry);
    if (!items.some((item) => item.kind === 'tool-call' && item.name === 'task')) return items;
    // AGENT-4: a reload shows each child's card again, from its saved transcript.
    const children = savedChildCards(s.home, s.id);
    return items.map((item) => {
      if (item.kind !== 'tool-call' || item.name !== 'task') return item;
      const child = children.get(item.callId);
      const agent = child ? savedChildCard(s.home, s.id, child) : undefined;
      return agent ? { ...item, agent } : item;
    });
  }

  /** The stored bytes of image N of this session (history previews); undefined when it has none. */
  async image(scope: string, number: number): Promise<{ bytes: Buffer; mime: string } | undefined> {
    this.checkScope(scope);
    const image = await this.attachments.registry.get(number);
    if (!image?.hash || image.draft) return undefined;
    const read = await this.attachments.readImage(image.hash, { mime: image.mime });
    return read.ok ? { bytes: read.bytes, mime: read.mime } : undefined;
  }

  /**
   * Validates one image of a message while the rest of its batch is still arriving, storage
   * free (WEB-10). Only an early start: `send` validates the whole batch again, in order, and
   * decides; a verdict reached here is remembered by content hash, so that pass is quick.
   */
  async prevalidate(position: number, entry: unknown, bytes: Buffer): Promise<void> {
    const e = (entry ?? {}) as { name?: unknown; type?: unknown };
    try {
      await this.attachments.validateImage(bytes, {
        position,
        name: displayName(e.name),
        declaredMime: typeof e.type === 'string' && e.type ? e.type : undefined,
      });
    } catch {
      // send reports it, in batch order.
    }
  }

  /** Bounds for `prevalidate`: the count and aggregate limits in force now. */
  batchBounds(): { maxImages: number; maxBytes: number } {
    const { maxImagesPerMessage, maxBatchBytes } = this.attachments.limits;
    return { maxImages: maxImagesPerMessage, maxBytes: maxBatchBytes };
  }

  /** Interrupts the running turn (the queue stays, QUEUE-12); false when nothing runs. */
  cancel(scope: string): boolean {
    this.checkScope(scope);
    if (this.controller.activity === 'idle') return false;
    this.controller.ctrlC(true);
    return true;
  }

  /** One input of the registry. `payload` holds a message's image bytes back to back. */
  async send(scope: string, input: ConversationInput, payload: Buffer): Promise<SendResult> {
    this.checkScope(scope);
    switch (input.kind) {
      case 'approval':
        if (!this.controller.answerApproval(input.id, input.answer, input.feedback)) {
          throw new ConversationError(409, `Approval ${input.id} is not waiting (already answered or cancelled).`);
        }
        return { images: [], queued: false };
      case 'question':
        if (!this.controller.answerQuestion(input.id, input.answers)) {
          throw new ConversationError(409, `Question ${input.id} is not waiting (already answered or cancelled).`);
        }
        return { images: [], queued: false };
      case 'plan':
        if (this.controller.mode !== input.mode) this.controller.togglePlan();
        return { images: [], queued: false };
      case 'queue': {
        const done =
          input.action === 'remove' ? this.controller.removeQueued(input.id) : this.controller.editQueued(input.id, input.text);
        if (!done) throw new ConversationError(409, `Queue item ${input.id} is not waiting any more (it was sent or removed).`);
        return { images: [], queued: false };
      }
      case 'message':
        return this.sendMessage(scope, input.text, input.images, payload);
    }
  }

  private async sendMessage(scope: string, typed: string, images: readonly ImageEntry[], payload: Buffer): Promise<SendResult> {
    // Typed look-alikes stay plain text (IMG-3): the controller tags only the spans given to it.
    const text = typed;
    const total = images.reduce((sum, image) => sum + image.size, 0);
    if (total !== payload.length) {
      throw new ConversationError(400, `The manifest lists ${total} image bytes but the body carries ${payload.length}.`);
    }
    if (images.length > 0 && isCommand(text)) {
      throw new ConversationError(400, 'A slash command takes no images; send the images with a message.');
    }
    const busy = this.controller.activity !== 'idle';
    if (images.length === 0) {
      this.controller.submit(text, []);
      return { images: [], queued: busy && text.trim() !== '' };
    }
    const session = this.controller.session;
    if (!session.imageInput) {
      throw new ConversationError(
        422,
        `The model ${session.provider}/${session.model} does not accept images (its catalog entry has no "imageInput": true). ` +
          'Remove the images or pick an image-capable model.',
        { kind: 'model' },
      );
    }
    let offset = 0;
    const items = images.map((image) => {
      const bytes = payload.subarray(offset, offset + image.size);
      offset += image.size;
      return { bytes, name: image.name, declaredMime: image.type };
    });
    let attached: Awaited<ReturnType<AttachmentService['attachBatch']>>;
    try {
      attached = await this.attachments.attachBatch(items);
    } catch (error) {
      if (error instanceof ImageError) {
        throw new ConversationError(422, error.message, {
          kind: error.kind,
          position: error.position,
          name: error.imageName,
          rule: error.rule,
        });
      }
      throw error;
    }
    this.checkScope(scope);
    // IMG-4: the markers the host put in front are the attached spans; the controller tags them.
    const spans: MarkerSpan[] = [];
    let markers = '';
    for (const a of attached) {
      if (markers !== '') markers += ' ';
      spans.push({ start: markers.length, number: a.number });
      markers += imageMarker(a.number);
    }
    this.controller.submit(text.trim() === '' ? markers : `${markers} ${text}`, spans);
    return { images: attached.map((a) => a.number), queued: busy };
  }

  private checkScope(scope: string): void {
    const current = this.controller.session.id;
    if (scope !== current) {
      throw new ConversationError(
        409,
        `This page shows session ${scope}, but the host is on session ${current} now; reload the page.`,
        { scope: current },
      );
    }
  }
}
