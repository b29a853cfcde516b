export * from './endpoint.js';
export * from './http-error.js';
export * from './create-client.js';
