/** Request encoding for the Anthropic Messages wire (`POST v1/messages`). */
import type { ChatMessage, ChatRequest, ImagePart, ThinkingEffort, ToolResultPart } from '@crystal/core';
import { parseArguments } from '@crystal/core';
import type { ModelSettings } from '../endpoint.js';
import { imageWithoutSource, misplacedImage, requireImageModel } from '../image-rules.js';

export interface AnthropicWireOptions {
  readonly provider: string;
  readonly model: ModelSettings;
}

/** `state.format` of a reasoning part that replays as a signed `thinking` block. */
export const THINKING_FORMAT = 'anthropic-thinking';
/** `state.format` of a reasoning part that replays as a `redacted_thinking` block (`data` = the encrypted payload). */
export const REDACTED_THINKING_FORMAT = 'anthropic-redacted-thinking';

/** The API requires `max_tokens`; this is the cap when the model sets none. */
export const DEFAULT_MAX_TOKENS = 8192;

/** The smallest `budget_tokens` the API accepts. */
export const MIN_THINKING_BUDGET = 1024;

export const THINKING_BUDGETS: Readonly<Record<Exclude<ThinkingEffort, 'default' | 'off'>, number>> = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 16384,
  maximum: 32000,
};

type ImageSource = { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };
type TextBlock = { type: 'text'; text: string };
type ImageBlock = { type: 'image'; source: ImageSource };
export type WireBlock =
  | TextBlock
  | ImageBlock
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'tool_result'; tool_use_id: string; content?: Array<TextBlock | ImageBlock>; is_error: boolean };

export interface WireMessage {
  role: 'user' | 'assistant';
  content: WireBlock[];
}

export function imageSource(part: ImagePart, provider: string): ImageSource {
  if (part.data !== undefined) return { type: 'base64', media_type: part.mime, data: part.data };
  if (part.uri !== undefined) return { type: 'url', url: part.uri };
  throw imageWithoutSource(part, provider);
}

/** WIRE-5: the Messages wire carries images only in user content and tool results. */
function refuseImage(role: string, provider: string): never {
  throw misplacedImage('Anthropic Messages', 'user messages and tool results', role, provider);
}

/** MODEL-1: an image for a model that does not declare `imageInput` is refused before sending. */
function refuseIfTextOnly(options: AnthropicWireOptions): void {
  requireImageModel(options.model, options.provider);
}

function imageBlock(part: ImagePart, options: AnthropicWireOptions): ImageBlock {
  refuseIfTextOnly(options);
  return { type: 'image', source: imageSource(part, options.provider) };
}

function toolResultBlock(part: ToolResultPart, options: AnthropicWireOptions): WireBlock {
  const content: Array<TextBlock | ImageBlock> = [];
  for (const c of part.content) {
    // The API rejects empty text blocks.
    if (c.type === 'text') {
      if (c.text !== '') content.push({ type: 'text', text: c.text });
    } else if (c.type === 'image') content.push(imageBlock(c, options));
  }
  return {
    type: 'tool_result',
    tool_use_id: part.callId,
    ...(content.length > 0 ? { content } : {}),
    is_error: part.isError,
  };
}

/** User and tool messages: tool results, text and images, all in a `user` message. */
function userBlocks(message: ChatMessage, options: AnthropicWireOptions): WireBlock[] {
  const blocks: WireBlock[] = [];
  for (const part of message.content) {
    if (part.type === 'text') {
      if (part.text !== '') blocks.push({ type: 'text', text: part.text });
    } else if (part.type === 'image') blocks.push(imageBlock(part, options));
    else if (part.type === 'tool-result') blocks.push(toolResultBlock(part, options));
  }
  return blocks;
}

/**
 * Assistant content in the order the API wants: thinking first (only signed blocks this wire
 * wrote: the API rejects unsigned thinking), then text, then tool_use with the parsed input.
 */
function assistantBlocks(message: ChatMessage, options: AnthropicWireOptions): WireBlock[] {
  const thinking: WireBlock[] = [];
  const text: WireBlock[] = [];
  const calls: WireBlock[] = [];
  for (const part of message.content) {
    switch (part.type) {
      case 'reasoning':
        if (part.state?.format === THINKING_FORMAT) {
          thinking.push({ type: 'thinking', thinking: part.text, signature: part.state.data });
        } else if (part.state?.format === REDACTED_THINKING_FORMAT) {
          thinking.push({ type: 'redacted_thinking', data: part.state.data });
        }
        break;
      case 'text':
        if (part.text !== '') text.push({ type: 'text', text: part.text });
        break;
      case 'tool-call': {
        // `input` must be an object; arguments that were not valid JSON replay as {} (the tool result already said so).
        const input = parseArguments(part.arguments);
        calls.push({
          type: 'tool_use',
          id: part.id,
          name: part.name,
          input: input !== null && typeof input === 'object' && !Array.isArray(input) ? input : {},
        });
        break;
      }
      case 'image':
        refuseImage('assistant', options.provider);
        break;
      case 'tool-result':
        break;
    }
  }
  return [...thinking, ...text, ...calls];
}

export interface EncodedMessages {
  readonly system: string;
  readonly messages: WireMessage[];
}

/** System text goes to the top-level `system`; the rest alternates user/assistant, same-role neighbours merged. */
export function encodeMessages(messages: readonly ChatMessage[], options: AnthropicWireOptions): EncodedMessages {
  const system: string[] = [];
  const out: WireMessage[] = [];
  for (const message of messages) {
    if (message.role === 'system') {
      let text = '';
      for (const part of message.content) {
        if (part.type === 'text') text += part.text;
        else if (part.type === 'image') refuseImage('system', options.provider);
      }
      if (text !== '') system.push(text);
      continue;
    }
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    const content = role === 'assistant' ? assistantBlocks(message, options) : userBlocks(message, options);
    if (content.length === 0) continue;
    const last = out.at(-1);
    if (last && last.role === role) last.content.push(...content);
    else out.push({ role, content });
  }
  // tool_result blocks must open the user message that answers a tool_use.
  for (const message of out) {
    if (message.role !== 'user') continue;
    const results = message.content.filter((b) => b.type === 'tool_result');
    if (results.length > 0 && results.length < message.content.length) {
      message.content = [...results, ...message.content.filter((b) => b.type !== 'tool_result')];
    }
  }
  return { system: system.join('\n\n'), messages: out };
}

/**
 * The `budget_tokens` for a gear, or undefined to omit `thinking` (default gear, `off`, a model
 * without thinking, a gear the model does not list, or no room under `max_tokens`). The budget
 * must be at least 1024 and below `max_tokens`; it is capped, never raised above the gear's.
 */
export function thinkingBudget(model: ModelSettings, effort: ThinkingEffort | undefined, maxTokens: number): number | undefined {
  if (!model.thinking || effort === undefined || effort === 'default' || effort === 'off') return undefined;
  if (model.thinkingEfforts && model.thinkingEfforts.length > 0 && !model.thinkingEfforts.includes(effort)) return undefined;
  if (maxTokens <= MIN_THINKING_BUDGET) return undefined;
  return Math.max(MIN_THINKING_BUDGET, Math.min(THINKING_BUDGETS[effort], maxTokens - 1));
}

/**
 * With thinking on, the API requires the last assistant message that called tools to open with a
 * thinking block. One without it (thinking was off then, or its signature is gone) would be a 400,
 * so this request goes without thinking instead.
 */
function lastToolTurnLacksThinking(messages: readonly WireMessage[]): boolean {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i] as WireMessage;
    if (message.role !== 'assistant') continue;
    if (!message.content.some((b) => b.type === 'tool_use')) return false;
    const first = message.content[0]?.type;
    return first !== 'thinking' && first !== 'redacted_thinking';
  }
  return false;
}

export function encodeRequest(request: ChatRequest, options: AnthropicWireOptions): Record<string, unknown> {
  const { system, messages } = encodeMessages(request.messages, options);
  const maxTokens = options.model.maxTokens ?? DEFAULT_MAX_TOKENS;
  const body: Record<string, unknown> = { model: options.model.id, max_tokens: maxTokens };
  if (system !== '') body.system = system;
  body.messages = messages;
  if (request.tools && request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({ name: tool.name, description: tool.description, input_schema: tool.parameters }));
  }
  body.stream = true;
  let budget = thinkingBudget(options.model, request.thinking, maxTokens);
  if (budget !== undefined && lastToolTurnLacksThinking(messages)) budget = undefined;
  if (budget !== undefined) body.thinking = { type: 'enabled', budget_tokens: budget };
  // The API refuses a temperature other than 1 while thinking is enabled.
  else if (options.model.temperature !== undefined) body.temperature = options.model.temperature;
  if (options.model.serviceTier !== undefined) body.service_tier = options.model.serviceTier;
  return body;
}
