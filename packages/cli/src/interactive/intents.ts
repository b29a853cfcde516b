/** The terminal's intents, carried out on the session controller. */
import { isCommand, type SessionController, shellEscapeCommand, tagAttachedSpans } from '@crystal/engine';
import type { Intents } from '@crystal/tui';
import { type AttachmentsFace, type ClipboardReader, pasteClipboardImage } from './clipboard.js';
import { expandMentions } from './mentions.js';
import { displayUserText } from './user-text.js';

/** The session's attachment service (the controller may expose it directly once wired). */
export function attachmentsOf(controller: SessionController): (AttachmentsFace & { registry?: RegistryFace }) | undefined {
  const direct = (controller as unknown as { attachments?: AttachmentsFace & { registry?: RegistryFace } }).attachments;
  return direct ?? (controller.session as unknown as { attachments?: AttachmentsFace & { registry?: RegistryFace } }).attachments;
}

interface RegistryFace {
  discardDeleted(taggedComposerText: string): Promise<number[]>;
}

export interface IntentOptions {
  readonly controller: SessionController;
  readonly readClipboard: ClipboardReader;
  readonly remember?: (text: string) => void;
  /** `/login [provider]`: the host asks for the key off the composer (SETUP-2). */
  readonly login?: (argument: string) => void;
  readonly completePath?: (query: string) => Promise<readonly string[]>;
  readonly notice?: (text: string) => void;
  /** Opens the picker a bare `/resume` or `/model` stands for; true when it did. */
  readonly pickers?: (text: string) => boolean;
  /** Esc Esc: opens the rewind picker (CKPT-3); false when the session has no checkpoints. */
  readonly rewind?: () => boolean;
}

export function controllerIntents(options: IntentOptions): Intents {
  const { controller } = options;
  // Submissions stay in typed order even when one waits for its @ files to be read.
  let order: Promise<void> = Promise.resolve();
  let waiting = 0;
  const inOrder = (work: () => void | Promise<void>): void => {
    if (waiting === 0) {
      const result = work();
      if (!result) return;
      waiting++;
      order = result.finally(() => void waiting--);
      return;
    }
    waiting++;
    order = order.then(work).finally(() => void waiting--);
  };
  return {
    submit(text, spans) {
      const login = /^\/login(?:\s+(.*))?$/.exec(text.trim());
      if (login && options.login) {
        // The key is read below the frame, so the turn's output and its prompts would have no
        // screen meanwhile (the inline view would lose the rest of a streaming answer).
        if (controller.activity !== 'idle') {
          options.notice?.('/login waits for an idle prompt: let the turn finish or press Esc, then /login again.');
          return;
        }
        return options.login(login[1] ?? '');
      }
      // IMG-4: only the attached spans get the provenance prefix; typed look-alikes stay plain.
      const tagged = spans.length > 0 ? tagAttachedSpans(text, spans) : text;
      // TUIX-11: `/resume` and `/model` without an argument open a picker instead.
      if (options.pickers && isCommand(tagged) && options.pickers(tagged)) return;
      if (isCommand(tagged) || shellEscapeCommand(tagged) !== undefined || !tagged.includes('@')) {
        inOrder(() => controller.submit(tagged));
        return;
      }
      inOrder(async () => {
        const expanded = await expandMentions(controller, tagged).catch((error: unknown) => ({
          text: tagged,
          notes: [`The @ files were not attached: ${(error as Error).message}`],
        }));
        for (const note of expanded.notes) options.notice?.(note);
        controller.submit(expanded.text);
      });
    },
    ctrlC: (composerEmpty) => controller.ctrlC(composerEmpty),
    interrupt() {
      // TUIX-1: Esc stops a running turn like Ctrl+C does (the queue stays: QUEUE-12); idle is a no-op here.
      if (controller.activity === 'idle') return false;
      controller.ctrlC(false);
      return true;
    },
    userMessages() {
      const texts: string[] = [];
      for (const message of controller.session.history()) {
        if (message.role !== 'user') continue;
        const text = message.content.map((p) => (p.type === 'text' ? p.text : '')).join('');
        if (text.trim() !== '') texts.push(displayUserText(text).text);
      }
      return texts;
    },
    completePath: options.completePath,
    togglePlan: () => void controller.togglePlan(),
    answerApproval: (id, answer, feedback) => void controller.answerApproval(id, answer, feedback),
    answerQuestion: (id, answers) => void controller.answerQuestion(id, answers === 'dismissed' ? 'dismissed' : answers),
    pasteImage: () => pasteClipboardImage(attachmentsOf(controller), options.readClipboard),
    cancelSide: () => void controller.cancelSide(),
    clearSideThread: () => controller.clearSideThread(),
    // IMG-7: the controller discards a deleted, unsent image at once when idle, at admission during a turn.
    imagesChanged: (numbers) => controller.composerImages(numbers),
    remember: options.remember,
    rewind: options.rewind,
  };
}
