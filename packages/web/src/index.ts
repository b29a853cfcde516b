/** The Web surface: the host (Hono on loopback, token, SSE) over the engine's session controller. */
export { findAppDirectory } from './app-files.js';
export { bodyLimitFor } from './input-frame.js';
export type { ConversationFace, PageControls, PageState, SendResult } from './conversation.js';
export type { ConversationInput, InputKind, InputRegistry } from './input-registry.js';
export type { HistoryItem, ImageRef } from './history-view.js';
export type { PageEvent } from './page-events.js';
export { INPUT_CONTENT_TYPE, startWebHost, type WebHost, type WebHostOptions } from './host.js';
