#!/usr/bin/env node
/**
 * The conformance driver: our client layer (`McpManager` from the built `@crystal/mcp`) against
 * a scenario server of `@modelcontextprotocol/conformance`. The suite appends the server URL as
 * the last argument and names the scenario in MCP_CONFORMANCE_SCENARIO.
 */
import { McpManager } from '../../dist/index.js';

const url = process.argv.at(-1);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const manager = new McpManager({
  servers: [
    {
      name: 'conformance',
      source: 'home',
      file: 'conformance driver',
      transport: 'http',
      url,
      args: [],
      env: {},
      headers: {},
      trust: true,
      timeoutMs: 20_000,
    },
  ],
  workspace: process.cwd(),
  onNote: (text) => process.stderr.write(`${text}\n`),
});

/** What each scenario's server asks of a client: the tool to call and its arguments. */
const CALLS = {
  tools_call: ['add_numbers', { a: 5, b: 3 }],
  'sse-retry': ['test_reconnection', {}],
};

let code = 0;
try {
  await manager.whenSettled();
  const [status] = manager.status();
  if (status?.state !== 'ready') throw new Error(`the server did not come up: ${status?.error ?? status?.state}`);
  const call = CALLS[scenario];
  if (call) {
    const tool = manager.tools().find((t) => t.tool === call[0]);
    if (!tool) throw new Error(`the server offers no ${call[0]} tool`);
    const result = await tool.call(call[1], new AbortController().signal);
    process.stdout.write(`${JSON.stringify(result)}\n`);
    if (result.isError) code = 1;
  }
} catch (error) {
  process.stderr.write(`driver: ${error.message}\n`);
  code = 1;
} finally {
  await manager.close();
}
process.exit(code);
