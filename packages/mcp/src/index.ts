/**
 * `@crystal/mcp`: the MCP client (MCP-1..6). It never imports the engine; the engine composes it
 * through `McpManager` (tool set, prompts, resources, status). The SDK is loaded by `import()`
 * only when a server starts.
 */
export * from './config.js';
export {
  CLIENT_INFO,
  McpCallError,
  McpConnection,
  type McpConnectionOptions,
  type McpFetch,
  type McpPromptInfo,
  type McpResourceInfo,
  type McpServerState,
  type McpToolInfo,
  type StdioLaunch,
  type StdioWrapper,
} from './connection.js';
export * from './manager.js';
export * from './names.js';
export * from './project-file.js';
export * from './results.js';
