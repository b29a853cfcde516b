/** Clipboard images: the per-platform readers and their operator errors (CLIP-1..7). */
export type { ClipboardReaderName } from './context.js';
export { ClipboardError, type ClipboardErrorKind } from './errors.js';
export { findOnPath, LINUX_IMAGE_TYPES, pickType } from './linux.js';
export { CLIPBOARD_INFO_ARGS, MAC_REPRESENTATIONS, macWriteArgs, OSASCRIPT, parseClipboardInfo } from './macos.js';
export { CLIPBOARD_TIMEOUT_MS, type ClipboardImage, type ClipboardReadOptions, readClipboardImage } from './reader.js';
export { type ReaderCommand, type ReaderResult, type ReaderRunner, spawnRunner } from './run.js';
export {
  parseWindowsOutput,
  powershellPath,
  windowsClipboardArgs,
  windowsClipboardScript,
  windowsOutputBytes,
} from './windows.js';
