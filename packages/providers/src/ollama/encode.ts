/** Request encoding for the Ollama Chat wire (`POST /api/chat`). */
import type { ChatMessage, ChatRequest, ImagePart, ThinkingEffort, ToolResultPart } from '@crystal/core';
import { parseArguments, ProviderError } from '@crystal/core';
import type { ModelSettings } from '../endpoint.js';
import { misplacedImage, requireImageModel } from '../image-rules.js';

export interface OllamaWireOptions {
  readonly provider: string;
  readonly model: ModelSettings;
}

export type OllamaMessage = Record<string, unknown>;

/** Ollama takes raw base64 (no `data:` prefix, no MIME) and cannot fetch an image by URI. */
function imageBytes(part: ImagePart, options: OllamaWireOptions): string {
  if (part.data !== undefined) return part.data;
  const label = part.name ? ` (${part.name})` : '';
  if (part.uri !== undefined) {
    throw new ProviderError({
      kind: 'unsupported',
      provider: options.provider,
      message: `The Ollama wire carries images only as inline bytes and cannot fetch ${part.uri}${label}; attach the image file instead of its URI.`,
    });
  }
  throw new ProviderError({
    kind: 'unsupported',
    provider: options.provider,
    message: `An image${label} has neither bytes nor a URI; attach it again.`,
  });
}

/** MODEL-1: images only for a model that declares `imageInput`. */
function refuseIfTextOnly(options: OllamaWireOptions): void {
  requireImageModel(options.model, options.provider);
}

/** WIRE-5 / MODEL-1: an image where this wire cannot carry it is an error before sending. */
function refuseImage(role: string, provider: string): never {
  throw misplacedImage('Ollama', 'user and tool messages', role, provider);
}

export function encodeMessages(messages: readonly ChatMessage[], options: OllamaWireOptions): OllamaMessage[] {
  const out: OllamaMessage[] = [];
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        out.push({ role: 'system', content: systemText(message, options) });
        break;
      case 'user':
        out.push(userMessage(message, options));
        break;
      case 'assistant':
        out.push(assistantMessage(message, options));
        break;
      case 'tool':
        for (const part of message.content) if (part.type === 'tool-result') out.push(toolMessage(part, options));
        break;
    }
  }
  return out;
}

function systemText(message: ChatMessage, options: OllamaWireOptions): string {
  let text = '';
  for (const part of message.content) {
    if (part.type === 'text') text += part.text;
    else if (part.type === 'image') refuseImage('system', options.provider);
  }
  return text;
}

function userMessage(message: ChatMessage, options: OllamaWireOptions): OllamaMessage {
  let text = '';
  const images: string[] = [];
  for (const part of message.content) {
    if (part.type === 'text') text += part.text;
    else if (part.type === 'image') {
      refuseIfTextOnly(options);
      images.push(imageBytes(part, options));
    }
  }
  const wire: OllamaMessage = { role: 'user', content: text };
  if (images.length > 0) wire.images = images;
  return wire;
}

function assistantMessage(message: ChatMessage, options: OllamaWireOptions): OllamaMessage {
  let text = '';
  let thinking = '';
  const toolCalls: unknown[] = [];
  for (const part of message.content) {
    if (part.type === 'text') text += part.text;
    else if (part.type === 'reasoning') thinking += part.text;
    else if (part.type === 'tool-call') {
      toolCalls.push({
        ...(part.id ? { id: part.id } : {}),
        function: { name: part.name, arguments: argumentObject(part.arguments) },
      });
    } else if (part.type === 'image') refuseImage('assistant', options.provider);
  }
  const wire: OllamaMessage = { role: 'assistant', content: text };
  if (thinking !== '') wire.thinking = thinking;
  if (toolCalls.length > 0) wire.tool_calls = toolCalls;
  return wire;
}

/**
 * Ollama wants the arguments as a JSON object. A call whose raw arguments are not a JSON object
 * (the model wrote invalid JSON; its result already says so) is replayed with `{}` so the
 * history stays acceptable to the server.
 */
function argumentObject(raw: string): Record<string, unknown> {
  const parsed = parseArguments(raw);
  return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
}

/** WIRE-3: tool-result text in `content`, its images on the tool message's `images` array. */
function toolMessage(part: ToolResultPart, options: OllamaWireOptions): OllamaMessage {
  let text = '';
  const images: string[] = [];
  for (const c of part.content) {
    if (c.type === 'text') text += c.text;
    else if (c.type === 'image') {
      refuseIfTextOnly(options);
      images.push(imageBytes(c, options));
    }
  }
  const wire: OllamaMessage = { role: 'tool', tool_name: part.name, content: text };
  if (part.callId) wire.tool_call_id = part.callId;
  if (images.length > 0) wire.images = images;
  return wire;
}

/**
 * Maps the host gear onto `think`: `false` for off; a level for models that list
 * `thinkingEfforts` (minimal→low, maximum→high); `true` for on/off-only models. `default`, a
 * model without thinking, or a gear the model does not list omits the hint.
 */
export function thinkValue(model: ModelSettings, effort: ThinkingEffort | undefined): boolean | string | undefined {
  if (!model.thinking || effort === undefined || effort === 'default') return undefined;
  const levels = model.thinkingEfforts && model.thinkingEfforts.length > 0 ? model.thinkingEfforts : undefined;
  if (levels && !levels.includes(effort)) return undefined;
  if (effort === 'off') return false;
  if (!levels) return true;
  if (effort === 'minimal') return 'low';
  if (effort === 'maximum') return 'high';
  return effort;
}

export function encodeRequest(request: ChatRequest, options: OllamaWireOptions): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: options.model.id,
    messages: encodeMessages(request.messages, options),
    stream: true,
  };
  if (request.tools && request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    }));
  }
  const sampling: Record<string, unknown> = {};
  if (options.model.maxTokens !== undefined) sampling.num_predict = options.model.maxTokens;
  // Ollama's own default context is a few thousand tokens whatever the model can take; the
  // catalog's window (from api/show when discovered, SETUP-3) is what compaction counts against.
  if (options.model.contextWindow !== undefined) sampling.num_ctx = options.model.contextWindow;
  if (options.model.temperature !== undefined) sampling.temperature = options.model.temperature;
  if (Object.keys(sampling).length > 0) body.options = sampling;
  const think = thinkValue(options.model, request.thinking);
  if (think !== undefined) body.think = think;
  return body;
}
