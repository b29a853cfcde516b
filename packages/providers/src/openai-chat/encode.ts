/** Request encoding for the Chat Completions wire (OpenAI-compatible and DeepSeek). */
import type { ChatMessage, ChatRequest, ImagePart, ThinkingEffort, ToolResultPart } from '@crystal/core';
import type { ModelSettings } from '../endpoint.js';
import { imageWithoutSource, misplacedImage, requireImageModel } from '../image-rules.js';

export interface ChatWireOptions {
  readonly provider: string;
  readonly model: ModelSettings;
  /** DeepSeek: replay `reasoning_content` on assistant messages. */
  readonly replayReasoning: boolean;
}

type WirePart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };
export type WireMessage = Record<string, unknown>;

export function imageUrl(part: ImagePart, provider: string): string {
  if (part.data !== undefined) return `data:${part.mime};base64,${part.data}`;
  if (part.uri !== undefined) return part.uri;
  throw imageWithoutSource(part, provider);
}

export function encodeMessages(messages: readonly ChatMessage[], options: ChatWireOptions): WireMessage[] {
  const out: WireMessage[] = [];
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        out.push({ role: 'system', content: textOf(message, options) });
        break;
      case 'user':
        out.push({ role: 'user', content: userContent(message, options) });
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

function textOf(message: ChatMessage, options: ChatWireOptions): string {
  let text = '';
  for (const part of message.content) {
    if (part.type === 'text') text += part.text;
    else if (part.type === 'image') refuseImage(message.role, options.provider);
  }
  return text;
}

/** WIRE-5 / MODEL-1: an image where this wire cannot carry it is an error before sending. */
function refuseImage(role: string, provider: string): never {
  throw misplacedImage('Chat Completions', 'user and tool messages', role, provider);
}

function userContent(message: ChatMessage, options: ChatWireOptions): string | WirePart[] {
  const hasImage = message.content.some((part) => part.type === 'image');
  if (!hasImage) return textOf(message, options);
  refuseIfTextOnly(options);
  const parts: WirePart[] = [];
  for (const part of message.content) {
    if (part.type === 'text') parts.push({ type: 'text', text: part.text });
    else if (part.type === 'image') parts.push({ type: 'image_url', image_url: { url: imageUrl(part, options.provider) } });
  }
  return parts;
}

function refuseIfTextOnly(options: ChatWireOptions): void {
  requireImageModel(options.model, options.provider);
}

function assistantMessage(message: ChatMessage, options: ChatWireOptions): WireMessage {
  let text = '';
  let reasoning = '';
  const toolCalls: unknown[] = [];
  for (const part of message.content) {
    if (part.type === 'text') text += part.text;
    else if (part.type === 'reasoning') reasoning += part.text;
    else if (part.type === 'tool-call') {
      toolCalls.push({ id: part.id, type: 'function', function: { name: part.name, arguments: part.arguments } });
    } else if (part.type === 'image') refuseImage('assistant', options.provider);
  }
  const wire: WireMessage = { role: 'assistant', content: text === '' && toolCalls.length > 0 ? null : text };
  if (toolCalls.length > 0) wire.tool_calls = toolCalls;
  if (options.replayReasoning && reasoning !== '') wire.reasoning_content = reasoning;
  return wire;
}

function toolMessage(part: ToolResultPart, options: ChatWireOptions): WireMessage {
  const hasImage = part.content.some((c) => c.type === 'image');
  if (!hasImage) {
    return {
      role: 'tool',
      tool_call_id: part.callId,
      content: part.content.map((c) => (c.type === 'text' ? c.text : '')).join(''),
    };
  }
  refuseIfTextOnly(options);
  const content: WirePart[] = part.content.map((c) =>
    c.type === 'text' ? { type: 'text', text: c.text } : { type: 'image_url', image_url: { url: imageUrl(c, options.provider) } },
  );
  return { role: 'tool', tool_call_id: part.callId, content };
}

/** Maps the host gear onto `reasoning_effort`; a model without thinking omits the hint. */
export function reasoningEffort(model: ModelSettings, effort: ThinkingEffort | undefined): string | undefined {
  if (!model.thinking || effort === undefined || effort === 'default') return undefined;
  if (model.thinkingEfforts && model.thinkingEfforts.length > 0 && !model.thinkingEfforts.includes(effort)) return undefined;
  if (effort === 'off') return 'none';
  if (effort === 'maximum') return 'xhigh';
  return effort;
}

export function encodeRequest(request: ChatRequest, options: ChatWireOptions): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: options.model.id,
    messages: encodeMessages(request.messages, options),
    stream: true,
    stream_options: { include_usage: true },
  };
  if (request.tools && request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    }));
  }
  if (options.model.maxTokens !== undefined) body.max_tokens = options.model.maxTokens;
  if (options.model.temperature !== undefined) body.temperature = options.model.temperature;
  const effort = reasoningEffort(options.model, request.thinking);
  if (effort !== undefined) body.reasoning_effort = effort;
  if (options.model.serviceTier !== undefined) body.service_tier = options.model.serviceTier;
  return body;
}
