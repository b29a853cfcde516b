export * from './endpoint.js';
export * from './http-error.js';
export * from './http.js';
export * from './sse.js';
export * from './create-client.js';
export * from './error-text.js';
export * from './transport/proxy.js';
export * from './transport/transport.js';
