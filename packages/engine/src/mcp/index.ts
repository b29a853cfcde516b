export * from './server-entries.js';
export * from './mcp-commands.js';
export * from './mcp-host.js';
export * from './mcp-tool.js';
export * from './project-trust.js';
