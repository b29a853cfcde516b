/**
 * Request encoding for the OpenAI Responses wire (`POST /responses`). Stateless: `store: false`,
 * the whole transcript is sent as input items every round, and reasoning is replayed from the
 * encrypted content this wire wrote into `ReasoningPart.state`.
 */
import type { ChatMessage, ChatRequest, ImagePart, ReasoningPart, ThinkingEffort, ToolResultPart } from '@crystal/core';
import type { ModelSettings } from '../endpoint.js';
import { imageWithoutSource, misplacedImage, requireImageModel } from '../image-rules.js';

/** `ProviderState.format` of the reasoning state this wire writes and reads back. */
export const REASONING_FORMAT = 'openai-responses-reasoning';

/** One replayable reasoning item as kept in `ProviderState.data` (JSON `{ items: [...] }`). */
export interface StoredReasoningItem {
  readonly id?: string;
  readonly encrypted_content: string;
  readonly summary?: readonly string[];
}

export interface ResponsesWireOptions {
  readonly provider: string;
  readonly model: ModelSettings;
}

type InputContent = { type: 'input_text'; text: string } | { type: 'input_image'; image_url: string };
export type InputItem = Record<string, unknown>;

export function encodeReasoningState(items: readonly StoredReasoningItem[]): string {
  return JSON.stringify({ items });
}

/** Reads the state back; a plain (non-JSON) string is taken as one item's encrypted content. */
export function decodeReasoningState(data: string): StoredReasoningItem[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return data === '' ? [] : [{ encrypted_content: data }];
  }
  const items = parsed && typeof parsed === 'object' ? (parsed as { items?: unknown }).items : undefined;
  if (!Array.isArray(items)) return typeof parsed === 'string' && parsed !== '' ? [{ encrypted_content: parsed }] : [];
  const out: StoredReasoningItem[] = [];
  for (const raw of items) {
    const item = raw as { id?: unknown; encrypted_content?: unknown; summary?: unknown };
    if (typeof item?.encrypted_content !== 'string' || item.encrypted_content === '') continue;
    const summary = Array.isArray(item.summary) ? item.summary.filter((s): s is string => typeof s === 'string') : undefined;
    out.push({
      ...(typeof item.id === 'string' && item.id !== '' ? { id: item.id } : {}),
      encrypted_content: item.encrypted_content,
      ...(summary ? { summary } : {}),
    });
  }
  return out;
}

function imageUrl(part: ImagePart, provider: string): string {
  if (part.data !== undefined) return `data:${part.mime};base64,${part.data}`;
  if (part.uri !== undefined) return part.uri;
  throw imageWithoutSource(part, provider);
}

/** WIRE-5 / MODEL-1: an image where this wire cannot carry it is an error before sending. */
function refuseImage(role: string, provider: string): never {
  throw misplacedImage('Responses', 'user messages and tool results', role, provider);
}

function refuseIfTextOnly(options: ResponsesWireOptions): void {
  requireImageModel(options.model, options.provider);
}

/** The system messages' text, joined by blank lines; undefined when there is none. */
export function encodeInstructions(messages: readonly ChatMessage[], options: ResponsesWireOptions): string | undefined {
  const texts: string[] = [];
  for (const message of messages) {
    if (message.role !== 'system') continue;
    let text = '';
    for (const part of message.content) {
      if (part.type === 'text') text += part.text;
      else if (part.type === 'image') refuseImage('system', options.provider);
    }
    if (text !== '') texts.push(text);
  }
  return texts.length > 0 ? texts.join('\n\n') : undefined;
}

export function encodeInput(messages: readonly ChatMessage[], options: ResponsesWireOptions): InputItem[] {
  const out: InputItem[] = [];
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        break;
      case 'user': {
        const item = userItem(message, options);
        if (item) out.push(item);
        break;
      }
      case 'assistant':
        out.push(...assistantItems(message, options));
        break;
      case 'tool':
        for (const part of message.content) if (part.type === 'tool-result') out.push(toolOutputItem(part, options));
        break;
    }
  }
  return out;
}

function userItem(message: ChatMessage, options: ResponsesWireOptions): InputItem | undefined {
  const content: InputContent[] = [];
  for (const part of message.content) {
    if (part.type === 'text') content.push({ type: 'input_text', text: part.text });
    else if (part.type === 'image') {
      refuseIfTextOnly(options);
      content.push({ type: 'input_image', image_url: imageUrl(part, options.provider) });
    }
  }
  return content.length > 0 ? { type: 'message', role: 'user', content } : undefined;
}

/**
 * Assistant content in transcript order: replayed reasoning items, one output message per run
 * of text, and function calls. A reasoning item with nothing after it is dropped: the API
 * refuses a reasoning item "without its required following item".
 */
function assistantItems(message: ChatMessage, options: ResponsesWireOptions): InputItem[] {
  const items: InputItem[] = [];
  let text: string | undefined;
  const flushText = (): void => {
    if (text !== undefined && text !== '') {
      items.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] });
    }
    text = undefined;
  };
  for (const part of message.content) {
    switch (part.type) {
      case 'text':
        text = (text ?? '') + part.text;
        break;
      case 'reasoning':
        flushText();
        items.push(...reasoningItems(part));
        break;
      case 'tool-call':
        flushText();
        items.push({ type: 'function_call', call_id: part.id, name: part.name, arguments: part.arguments });
        break;
      case 'image':
        refuseImage('assistant', options.provider);
        break;
      default:
        break;
    }
  }
  flushText();
  while (items.length > 0 && items.at(-1)?.type === 'reasoning') items.pop();
  return items;
}

/** Only reasoning this wire wrote (with encrypted content) can be replayed; other reasoning stays local. */
function reasoningItems(part: ReasoningPart): InputItem[] {
  if (part.state?.format !== REASONING_FORMAT) return [];
  const stored = decodeReasoningState(part.state.data);
  return stored.map((item, index) => {
    // Older or foreign state without per-item summaries: the part's text summarises the first item.
    const summary = item.summary ?? (index === 0 && part.text !== '' ? [part.text] : []);
    return {
      type: 'reasoning',
      ...(item.id ? { id: item.id } : {}),
      summary: summary.map((text) => ({ type: 'summary_text', text })),
      encrypted_content: item.encrypted_content,
    };
  });
}

function toolOutputItem(part: ToolResultPart, options: ResponsesWireOptions): InputItem {
  const hasImage = part.content.some((c) => c.type === 'image');
  if (!hasImage) {
    return {
      type: 'function_call_output',
      call_id: part.callId,
      output: part.content.map((c) => (c.type === 'text' ? c.text : '')).join(''),
    };
  }
  refuseIfTextOnly(options);
  const output: InputContent[] = part.content.map((c) =>
    c.type === 'text' ? { type: 'input_text', text: c.text } : { type: 'input_image', image_url: imageUrl(c, options.provider) },
  );
  return { type: 'function_call_output', call_id: part.callId, output };
}

/**
 * Maps the host gear onto `reasoning`: maximum → xhigh, off → effort none (no summary), any
 * other gear → that effort with `summary: 'auto'`. `default`, a model without thinking, or a
 * gear outside the model's `thinkingEfforts` sends no hint (the provider's default).
 */
export function reasoningFor(model: ModelSettings, gear: ThinkingEffort | undefined): Record<string, string> | undefined {
  if (!model.thinking || gear === undefined || gear === 'default') return undefined;
  if (model.thinkingEfforts && model.thinkingEfforts.length > 0 && !model.thinkingEfforts.includes(gear)) return undefined;
  if (gear === 'off') return { effort: 'none' };
  return { effort: gear === 'maximum' ? 'xhigh' : gear, summary: 'auto' };
}

export function encodeRequest(request: ChatRequest, options: ResponsesWireOptions): Record<string, unknown> {
  const body: Record<string, unknown> = { model: options.model.id };
  const instructions = encodeInstructions(request.messages, options);
  if (instructions !== undefined) body.instructions = instructions;
  body.input = encodeInput(request.messages, options);
  if (request.tools && request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
      strict: false,
    }));
  }
  body.stream = true;
  body.store = false;
  const reasoning = reasoningFor(options.model, request.thinking);
  // With store false, reasoning survives between rounds only as encrypted content we replay;
  // a thinking model reasons under the default gear too, so ask for it unless reasoning is off.
  if (options.model.thinking === true && reasoning?.effort !== 'none') body.include = ['reasoning.encrypted_content'];
  if (options.model.maxTokens !== undefined) body.max_output_tokens = options.model.maxTokens;
  if (options.model.temperature !== undefined) body.temperature = options.model.temperature;
  if (reasoning !== undefined) body.reasoning = reasoning;
  if (options.model.serviceTier !== undefined) body.service_tier = options.model.serviceTier;
  return body;
}
