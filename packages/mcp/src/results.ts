/**
 * Maps an MCP `tools/call` result onto tool result parts (MCP-3): text stays text; an image
 * becomes an image part (the host checks it and turns it into a marker, exactly as an exec tool
 * image); an embedded resource becomes its text (headed by its URI), or an image part when it
 * is an image blob, or a line naming it otherwise; a resource link and audio become a line of
 * text. `structuredContent` with no content is sent as JSON text. `isError` is kept: the host
 * turns such a result into a model-visible error.
 */
import type { ToolResultContent } from '@crystal/core';

export interface McpCallOutcome {
  readonly content: ToolResultContent[];
  readonly isError: boolean;
}

type Block = Record<string, unknown>;

export function mapCallResult(result: unknown): McpCallOutcome {
  const record = isRecord(result) ? result : {};
  const blocks = Array.isArray(record.content) ? record.content.filter(isRecord) : [];
  const content: ToolResultContent[] = [];
  for (const block of blocks) content.push(...mapBlock(block));
  if (content.length === 0 && record.structuredContent !== undefined) {
    content.push({ type: 'text', text: JSON.stringify(record.structuredContent) });
  }
  if (content.length === 0 && 'toolResult' in record) {
    // The 2024-10-07 result shape some older servers still send.
    content.push({
      type: 'text',
      text: typeof record.toolResult === 'string' ? record.toolResult : JSON.stringify(record.toolResult),
    });
  }
  return { content: mergeText(content), isError: record.isError === true };
}

export function mapBlock(block: Block): ToolResultContent[] {
  switch (block.type) {
    case 'text':
      return [{ type: 'text', text: String(block.text ?? '') }];
    case 'image':
      return [{ type: 'image', mime: String(block.mimeType ?? ''), data: String(block.data ?? '') }];
    case 'audio':
      return [
        { type: 'text', text: `[audio ${String(block.mimeType ?? 'unknown type')} omitted: audio is not passed to the model]` },
      ];
    case 'resource_link':
      return [{ type: 'text', text: `[resource ${String(block.uri ?? '')}${block.name ? ` (${String(block.name)})` : ''}]` }];
    case 'resource':
      return isRecord(block.resource) ? mapResource(block.resource) : [];
    default:
      return [{ type: 'text', text: `[unsupported MCP content type ${JSON.stringify(block.type)}]` }];
  }
}

/** One `resources/read` content item (or an embedded resource) as parts. */
export function mapResource(resource: Block): ToolResultContent[] {
  const uri = String(resource.uri ?? '');
  const mime = typeof resource.mimeType === 'string' ? resource.mimeType : undefined;
  if (typeof resource.text === 'string') return [{ type: 'text', text: `[resource ${uri}]\n${resource.text}` }];
  if (typeof resource.blob === 'string') {
    if (mime?.startsWith('image/')) return [{ type: 'image', mime, data: resource.blob }];
    const bytes = Math.floor((resource.blob.length * 3) / 4);
    return [{ type: 'text', text: `[resource ${uri}: ${mime ?? 'binary'} data, about ${bytes} bytes, not shown]` }];
  }
  return [{ type: 'text', text: `[resource ${uri}]` }];
}

/** Adjacent text parts joined with a newline, so the model sees one readable text. */
function mergeText(parts: ToolResultContent[]): ToolResultContent[] {
  const out: ToolResultContent[] = [];
  for (const part of parts) {
    const last = out[out.length - 1];
    if (part.type === 'text' && last?.type === 'text') out[out.length - 1] = { type: 'text', text: `${last.text}\n${part.text}` };
    else out.push(part);
  }
  return out;
}

function isRecord(value: unknown): value is Block {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
