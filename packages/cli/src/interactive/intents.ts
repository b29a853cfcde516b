/** The terminal's intents, carried out on the session controller. */
import { type SessionController, tagAttachedSpans, taggedMarker } from '@crystal/engine';
import type { Intents } from '@crystal/tui';
import { type AttachmentsFace, type ClipboardReader, pasteClipboardImage } from './clipboard.js';

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
}

export function controllerIntents(options: IntentOptions): Intents {
  const { controller } = options;
  return {
    submit(text, spans) {
      const login = /^\/login(?:\s+(.*))?$/.exec(text.trim());
      if (login && options.login) return options.login(login[1] ?? '');
      // IMG-4: only the attached spans get the provenance prefix; typed look-alikes stay plain.
      controller.submit(spans.length > 0 ? tagAttachedSpans(text, spans) : text);
    },
    ctrlC: (composerEmpty) => controller.ctrlC(composerEmpty),
    togglePlan: () => void controller.togglePlan(),
    answerApproval: (id, answer) => void controller.answerApproval(id, answer),
    answerQuestion: (id, answers) => void controller.answerQuestion(id, answers === 'dismissed' ? 'dismissed' : answers),
    pasteImage: () => pasteClipboardImage(attachmentsOf(controller), options.readClipboard),
    cancelSide: () => void controller.cancelSide(),
    clearSideThread: () => controller.clearSideThread(),
    imagesChanged(numbers) {
      // IMG-7: a deleted, unsent image is discarded at once when idle (at submit during a turn).
      if (controller.activity !== 'idle') return;
      const registry = attachmentsOf(controller)?.registry;
      void registry?.discardDeleted(numbers.map(taggedMarker).join(' ')).catch(() => undefined);
    },
    remember: options.remember,
  };
}
