/** Request encoding for the Gemini GenerateContent wire (`v1beta/models/{model}:streamGenerateContent`). */
import type { ChatMessage, ChatRequest, ImagePart, ThinkingEffort, ToolCallPart, ToolResultPart } from '@crystal/core';
import { parseArguments } from '@crystal/core';
import type { ModelSettings } from '../endpoint.js';
import { imageWithoutSource, misplacedImage, requireImageModel } from '../image-rules.js';

/** The `ProviderState.format` this wire writes and reads back: a Gemini `thoughtSignature`. */
export const SIGNATURE_FORMAT = 'gemini-signature';

export interface GeminiWireOptions {
  readonly provider: string;
  readonly model: ModelSettings;
}

export type WirePart = Record<string, unknown>;
export interface WireContent {
  role: 'user' | 'model';
  parts: WirePart[];
}

/** The JSON body of one streamGenerateContent request. */
export function encodeRequest(request: ChatRequest, options: GeminiWireOptions): Record<string, unknown> {
  const { contents, system } = encodeMessages(request.messages, options);
  const body: Record<string, unknown> = { contents };
  if (system.length > 0) body.systemInstruction = { parts: system.map((text) => ({ text })) };
  if (request.tools && request.tools.length > 0) {
    body.tools = [
      {
        functionDeclarations: request.tools.map((tool) => ({
          name: tool.name,
          description: tool.description,
          parameters: tool.parameters,
        })),
      },
    ];
  }
  const generationConfig: Record<string, unknown> = {};
  if (options.model.maxTokens !== undefined) generationConfig.maxOutputTokens = options.model.maxTokens;
  if (options.model.temperature !== undefined) generationConfig.temperature = options.model.temperature;
  const thinkingConfig = thinkingConfigFor(options.model, request.thinking);
  if (thinkingConfig !== undefined) generationConfig.thinkingConfig = thinkingConfig;
  if (Object.keys(generationConfig).length > 0) body.generationConfig = generationConfig;
  return body;
}

/**
 * Maps the host gear onto `generationConfig.thinkingConfig`: `off` sets a zero thinking budget,
 * the named gears set `thinkingLevel` (maximum → high, the highest level the wire has) and ask for
 * thought summaries; `default`, a model without thinking, or a gear the model does not list omits it.
 */
export function thinkingConfigFor(model: ModelSettings, effort: ThinkingEffort | undefined): Record<string, unknown> | undefined {
  if (!model.thinking || effort === undefined || effort === 'default') return undefined;
  if (model.thinkingEfforts && model.thinkingEfforts.length > 0 && !model.thinkingEfforts.includes(effort)) return undefined;
  if (effort === 'off') return { thinkingBudget: 0 };
  return { includeThoughts: true, thinkingLevel: effort === 'maximum' ? 'high' : effort };
}

/** System messages become `systemInstruction`; the rest become `contents` with roles user / model. */
export function encodeMessages(
  messages: readonly ChatMessage[],
  options: GeminiWireOptions,
): { contents: WireContent[]; system: string[] } {
  const contents: WireContent[] = [];
  const system: string[] = [];
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        for (const part of message.content) {
          if (part.type === 'text') system.push(part.text);
          else if (part.type === 'image') refuseImage('system', options.provider);
        }
        break;
      case 'user':
        contents.push({ role: 'user', parts: userParts(message, options) });
        break;
      case 'assistant': {
        const parts = modelParts(message, options);
        if (parts.length > 0) contents.push({ role: 'model', parts });
        break;
      }
      case 'tool': {
        const parts = message.content.filter((p) => p.type === 'tool-result').map((p) => functionResponse(p, options));
        if (parts.length === 0) break;
        // One content holds all function responses of a batch, in call order.
        const last = contents.at(-1);
        if (last && last.role === 'user' && last.parts.length > 0 && last.parts.every((p) => 'functionResponse' in p)) {
          last.parts.push(...parts);
        } else contents.push({ role: 'user', parts });
        break;
      }
    }
  }
  return { contents, system };
}

function userParts(message: ChatMessage, options: GeminiWireOptions): WirePart[] {
  const parts: WirePart[] = [];
  for (const part of message.content) {
    if (part.type === 'text') parts.push({ text: part.text });
    else if (part.type === 'image') {
      refuseIfTextOnly(options);
      parts.push(imagePart(part, options.provider));
    }
  }
  return parts;
}

/**
 * A model turn replays text and function calls, never thought text. Signatures travel back on the
 * part they came with: a call's own `gemini-signature` state on its `functionCall` part, and a
 * reasoning part's signature on the text part (the last part of a turn without calls).
 */
function modelParts(message: ChatMessage, options: GeminiWireOptions): WirePart[] {
  let text = '';
  let signature: string | undefined;
  const calls: WirePart[] = [];
  for (const part of message.content) {
    if (part.type === 'text') text += part.text;
    else if (part.type === 'reasoning') {
      if (part.state?.format === SIGNATURE_FORMAT) signature = part.state.data;
    } else if (part.type === 'tool-call') calls.push(functionCall(part));
    else if (part.type === 'image') refuseImage('assistant', options.provider);
  }
  const parts: WirePart[] = [];
  if (text !== '' || (signature !== undefined && calls.length === 0)) {
    parts.push(signature === undefined ? { text } : { text, thoughtSignature: signature });
  }
  parts.push(...calls);
  return parts;
}

function functionCall(part: ToolCallPart): WirePart {
  const parsed = parseArguments(part.arguments);
  // The wire carries arguments as an object; anything else (invalid JSON from another wire) goes as {}.
  const args = parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : {};
  const wire: WirePart = { functionCall: { name: part.name, args, ...(part.id ? { id: part.id } : {}) } };
  if (part.state?.format === SIGNATURE_FORMAT) wire.thoughtSignature = part.state.data;
  return wire;
}

/**
 * WIRE-2: a tool result is one `functionResponse` part; its text goes in `response` (`output`, or
 * `error` when the tool failed) and its images travel as `inlineData` / `fileData` parts inside the
 * functionResponse (Gemini 3 multimodal function responses), never as separate user parts.
 */
function functionResponse(part: ToolResultPart, options: GeminiWireOptions): WirePart {
  let text = '';
  const media: WirePart[] = [];
  for (const item of part.content) {
    if (item.type === 'text') text += item.text;
    else {
      refuseIfTextOnly(options);
      media.push(imagePart(item, options.provider));
    }
  }
  const response = part.isError ? { error: text } : { output: text };
  return {
    functionResponse: {
      ...(part.callId ? { id: part.callId } : {}),
      name: part.name,
      response,
      ...(media.length > 0 ? { parts: media } : {}),
    },
  };
}

function imagePart(part: ImagePart, provider: string): WirePart {
  if (part.data !== undefined) return { inlineData: { mimeType: part.mime, data: part.data } };
  if (part.uri !== undefined) return { fileData: { mimeType: part.mime, fileUri: part.uri } };
  throw imageWithoutSource(part, provider);
}

/** WIRE-5 / MODEL-1: an image where this wire cannot carry it is an error before sending. */
function refuseImage(role: string, provider: string): never {
  throw misplacedImage('Gemini', 'user messages and tool results', role, provider);
}

function refuseIfTextOnly(options: GeminiWireOptions): void {
  requireImageModel(options.model, options.provider);
}
