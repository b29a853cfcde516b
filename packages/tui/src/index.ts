/** The terminal display: painter, input decoder, composer, transcript, panels. Imports only core (DESIGN.md). */
export * from './ansi.js';
export * from './app.js';
export * from './composer.js';
export * from './entries.js';
export * from './input-decoder.js';
export * from './intents.js';
export * from './markdown.js';
export * from './markdown-stream.js';
export * from './painter.js';
export * from './plain-stream.js';
export * from './progress.js';
export * from './resize-notice.js';
export * from './rows.js';
export * from './sanitize.js';
export * from './status-bar.js';
export * from './style.js';
export * from './text-width.js';
export * from './transcript.js';
export * from './view-model.js';
export * from './wrap.js';
export { renderApproval, approvalKey } from './panels/approval-card.js';
export { QuestionState } from './panels/question-overlay.js';
export { renderSidePanel } from './panels/side-panel.js';
export { renderQueuePanel } from './panels/queue-panel.js';
export { SlashPicker } from './panels/slash-picker.js';
export { ListPicker, type ListPickerItem, type ListPickerOptions } from './panels/list-picker.js';
export {
  openRestoreChoice,
  openRewindConflict,
  openRewindPicker,
  type RewindChoice,
  type RewindConflictView,
  type RewindPickerEntry,
} from './panels/rewind-picker.js';
export * from './agent-card.js';
