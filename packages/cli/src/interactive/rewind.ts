/**
 * The terminal's side of `/rewind` (CKPT-3, CKPT-4): the engine publishes `rewind-picker`
 * (earlier messages), `rewind-conflict` (files changed since the checkpoint) and
 * `checkpoint-restored`; this opens the pickers of `@crystal/tui` on them and submits the
 * answer as the command (`/rewind N code|chat|both [force]`), so the engine's rules apply.
 * A conversation rewind puts the message back into the composer for editing.
 */
import type { ControllerEvent, SessionController } from '@crystal/engine';
import { openRewindConflict, openRewindPicker, type TerminalApp } from '@crystal/tui';

export class RewindView {
  /** Set while the picker stands for the `/rewind` listing, whose text panel is then not printed. */
  private listing = false;

  constructor(
    private readonly app: TerminalApp,
    private readonly controller: SessionController,
  ) {}

  /** Esc Esc: asks the engine for the list (the picker opens on its event); false when checkpoints are off. */
  open(): boolean {
    if (!this.controller.session.checkpoints || this.controller.activity !== 'idle') return false;
    this.controller.submit('/rewind');
    return true;
  }

  /** Handles the event when it is a rewind one; true when it was. */
  onEvent(event: ControllerEvent): boolean {
    const open = (options: Parameters<TerminalApp['openList']>[0]): void => this.app.openList(options);
    switch (event.type) {
      case 'rewind-picker':
        this.listing = true;
        openRewindPicker(event.entries, open, (turn, what) => this.controller.submit(`/rewind ${turn} ${what}`));
        return true;
      case 'rewind-conflict':
        openRewindConflict(event, open, (command) => this.controller.submit(command));
        return true;
      case 'checkpoint-restored':
        if (event.composerText !== undefined) this.app.editText(event.composerText);
        return true;
      case 'command-output':
        // The picker shows the `/rewind` list; its text copy would only repeat it.
        if (this.listing && event.command.trim().split(/\s+/).length === 1 && event.output.kind === 'text') {
          this.listing = false;
          return true;
        }
        this.listing = false;
        return false;
      default:
        return false;
    }
  }
}
