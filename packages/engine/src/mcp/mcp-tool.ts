/**
 * An MCP tool as an external tool of the catalog (MCP-3, MCP-4): named `mcp__<server>__<tool>`
 * with the server's JSON Schema, offered in Work. Its result goes through the same checks as an
 * exec tool's content output: text is capped, images must be PNG/JPEG/GIF/WebP whose bytes match
 * the type (at most 8, 20 MiB each) and a text-only turn refuses them (IMG-19); the session turns
 * them into markers the next round sees (IMG-18). An `isError` result is a model-visible error.
 * Approval: always at least Write + Workspace (so `default` and `edit` ask, `full` passes);
 * `"trust": true` on the entry makes the tool automatic. Annotations only label the card.
 */
import type { ImagePart, ToolContext, ToolOutput, ToolResultContent } from '@crystal/core';
import type { McpTool } from '@crystal/mcp';
import { ToolFailure } from '../tools/builtin/failure.js';
import {
  acceptsImages,
  CANCELLED_TOOL_TEXT,
  type ExternalTool,
  type ExternalToolContext,
} from '../external-tools/external-tool.js';
import { checkToolImage, decodeBase64, MAX_TOOL_IMAGES, TEXT_ONLY_IMAGE_ERROR } from '../external-tools/image-bytes.js';
import { capToolOutput } from '../external-tools/output-cap.js';
import { inputObject } from '../external-tools/path-arguments.js';

const HINTS: readonly [string, string][] = [
  ['readOnlyHint', 'read-only'],
  ['destructiveHint', 'destructive'],
  ['idempotentHint', 'idempotent'],
  ['openWorldHint', 'open world'],
];

/** `MCP everything/echo (server hints: read-only, idempotent)`: what the approval card says. */
export function mcpSummary(tool: Pick<McpTool, 'server' | 'tool' | 'annotations'>): string {
  const hints = HINTS.filter(([key]) => tool.annotations[key] === true).map(([, label]) => label);
  return `MCP ${tool.server}/${tool.tool}${hints.length > 0 ? ` (server hints: ${hints.join(', ')})` : ''}`;
}

export function createMcpTool(tool: McpTool, context: Pick<ExternalToolContext, 'imageInput'>): ExternalTool {
  return {
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters,
    set: tool.server,
    source: tool.source,
    runner: 'mcp',
    catalogs: ['work'],
    declaredApproval: tool.trusted ? 'always' : 'inherit',
    facts: { pathArguments: [], automatic: tool.trusted, summary: mcpSummary(tool) },
    execute: (input, toolContext) => runMcpTool(tool, context, input, toolContext),
  };
}

async function runMcpTool(
  tool: McpTool,
  context: Pick<ExternalToolContext, 'imageInput'>,
  input: unknown,
  toolContext: ToolContext,
): Promise<ToolOutput> {
  let outcome: Awaited<ReturnType<McpTool['call']>>;
  try {
    outcome = await tool.call(inputObject(input), toolContext.signal);
  } catch (error) {
    if (toolContext.signal.aborted) throw new ToolFailure(CANCELLED_TOOL_TEXT);
    throw new ToolFailure((error as Error).message);
  }
  if (outcome.isError) {
    const text = outcome.content.map((part) => (part.type === 'text' ? part.text : `[image ${part.mime}]`)).join('\n');
    throw new ToolFailure(
      capToolOutput(text === '' ? `The MCP tool ${tool.tool} of server ${tool.server} reported an error.` : text),
    );
  }
  const images = outcome.content.filter((part): part is ImagePart => part.type === 'image');
  if (images.length > 0 && !acceptsImages(context as ExternalToolContext)) throw new ToolFailure(TEXT_ONLY_IMAGE_ERROR);
  if (images.length > MAX_TOOL_IMAGES) {
    throw new ToolFailure(`The MCP tool returned ${images.length} images; at most ${MAX_TOOL_IMAGES} are passed on.`);
  }
  const out: ToolResultContent[] = [];
  let index = 0;
  for (const part of outcome.content) {
    if (part.type === 'text') {
      out.push({ type: 'text', text: capToolOutput(part.text) });
      continue;
    }
    const label = `image ${++index}`;
    try {
      checkToolImage(decodeBase64(part.data ?? '', label), part.mime, label);
    } catch (error) {
      throw new ToolFailure(
        `The MCP tool ${tool.tool} of server ${tool.server} returned an unusable image: ${(error as Error).message}`,
      );
    }
    out.push({ type: 'image', mime: part.mime, data: part.data ?? '' });
  }
  return out.length > 0 ? out : '(no output)';
}
