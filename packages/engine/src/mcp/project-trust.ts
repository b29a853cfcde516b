/**
 * "May this project's code run here?" for MCP servers from the project's `.mcp.json` (MCP-2).
 * The one place MCP asks; today it is the workspace trust store (`trust.ts`). When the shared
 * trust function (and `crystal run --trust-workspace`) lands, point this at it.
 */
import { isTrusted } from '../trust.js';

export function mayRunProjectServers(home: string, workspace: string): boolean {
  try {
    return isTrusted(home, workspace);
  } catch {
    // A corrupt trusted.json is reported by the trust prompt; here it counts as not trusted.
    return false;
  }
}
