export * from './endpoint.js';
export * from './http-error.js';
export * from './http.js';
export * from './sse.js';
export * from './create-client.js';
export * from './model-list.js';
