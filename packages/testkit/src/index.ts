export * from './script.js';
export * from './wire.js';
export * from './fake-provider.js';
export * from './wires/index.js';
export * from './harness.js';
export * from './models-endpoint.js';
export * from './proxy.js';
export * from './tls.js';
