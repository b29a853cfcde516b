/** Image input: limits, validation, the media store, attachments, markers and provider fitting. */
export * from './attachments.js';
export * from './downscale.js';
export * from './limits.js';
export * from './markers.js';
export * from './media-store.js';
export * from './validate.js';
export * from './clipboard/index.js';
