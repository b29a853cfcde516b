/**
 * In-process JavaScript plugin tools (TOOLS-4, IMG-18): a set with `"runner": "plugin"` names an
 * ES module (`"module": "./tool.mjs"`, relative to the set directory) loaded with `import()`. Its
 * default export (or a `tools` export) is a tool definition or an array of them:
 * `{ name, description, parameters, execute(input, context) }`. `execute` may return text or text
 * and image parts (`{type: "image", mime, data}` or `{type: "image", mime, uri}`); images follow the
 * tool-image rules and a text-only turn refuses them (IMG-19). The set's `timeoutSeconds` applies:
 * the call's signal is aborted and the call fails.
 */
import { promises as fs } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type ImagePart, importOutside, type ToolContext, type ToolOutput, type ToolResultContent } from '@crystal/core';
import { mayRunProjectCode } from '../trust.js';
import type { ToolSet } from './discover.js';
import { acceptsImages, CANCELLED_TOOL_TEXT, type ExternalTool, type ExternalToolContext, timeoutText } from './external-tool.js';
import { checkToolImage, decodeBase64, MAX_TOOL_IMAGES, TEXT_ONLY_IMAGE_ERROR, TOOL_IMAGE_MIME_TYPES } from './image-bytes.js';
import { TOOL_NAME } from './manifest.js';
import { capToolOutput } from './output-cap.js';
import { fencePathArguments, inputObject } from './path-arguments.js';

/** What a plugin's `execute` receives besides the input. */
export interface PluginToolContext extends ToolContext {
  readonly workspace: string;
  readonly sessionId: string;
}

/** The shape a plugin module exports. */
export interface PluginToolDefinition {
  readonly name: string;
  readonly description: string;
  readonly parameters: Record<string, unknown>;
  execute(input: unknown, context: PluginToolContext): Promise<ToolOutput> | ToolOutput;
}

/** A plugin module that cannot be used; the message says what is wrong and where. */
export class PluginLoadProblem extends Error {}

export type PluginSet = ToolSet & { readonly manifest: Extract<ToolSet['manifest'], { runner: 'plugin' }> };

export function isPluginSet(set: ToolSet): set is PluginSet {
  return set.manifest.runner === 'plugin';
}

/** A project set in a workspace whose code may not run (SEC-1); nothing of it was imported or run. */
export class UntrustedProjectCode extends Error {}

/** Asked by every loader of project code before it imports or runs anything (SEC-1). */
export function assertProjectCodeMayRun(set: ToolSet, context: ExternalToolContext): void {
  if (set.source === 'project' && !mayRunProjectCode(context.projectCode)) {
    throw new UntrustedProjectCode(`${set.dir}: the workspace is not trusted`);
  }
}

/**
 * Imports the set's module and wraps each exported definition; throws `PluginLoadProblem`, or
 * `UntrustedProjectCode` (before any import) for a project set in an untrusted workspace.
 */
export async function loadPluginTools(set: PluginSet, context: ExternalToolContext): Promise<ExternalTool[]> {
  assertProjectCodeMayRun(set, context);
  const definitions = await importDefinitions(set);
  const names = new Set(definitions.map((d) => d.name));
  for (const name of Object.keys(set.manifest.overrides)) {
    if (!names.has(name)) throw new PluginLoadProblem(`tools.${name}: the module exports no tool named ${name}`);
  }
  return definitions.map((definition) => wrap(set, definition, context));
}

async function importDefinitions(set: PluginSet): Promise<PluginToolDefinition[]> {
  const file = resolve(set.dir, set.manifest.module);
  const stat = await fs.stat(file).catch(() => undefined);
  if (!stat?.isFile()) throw new PluginLoadProblem(`module: ${file} is not a file`);
  // The modification time in the URL makes a reload import the edited module, not the cached one.
  const url = `${pathToFileURL(file).href}?mtime=${stat.mtimeMs}`;
  let module: Record<string, unknown>;
  try {
    module = await importOutside(url);
  } catch (error) {
    throw new PluginLoadProblem(`module: ${file} cannot be loaded (${(error as Error).message})`);
  }
  const exported = module.default ?? module.tools;
  const list = Array.isArray(exported) ? exported : exported === undefined ? [] : [exported];
  if (list.length === 0) {
    throw new PluginLoadProblem(`module: ${file} exports no tool; export default { name, description, parameters, execute }`);
  }
  const seen = new Set<string>();
  return list.map((candidate, index) => {
    const definition = checkDefinition(
      candidate,
      `module: ${file}: export ${Array.isArray(exported) ? `[${index}]` : 'default'}`,
    );
    if (seen.has(definition.name))
      throw new PluginLoadProblem(`module: ${file}: the tool name ${definition.name} is exported twice`);
    seen.add(definition.name);
    return definition;
  });
}

function checkDefinition(value: unknown, where: string): PluginToolDefinition {
  const record = value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : undefined;
  if (!record) throw new PluginLoadProblem(`${where}: expected an object { name, description, parameters, execute }`);
  if (typeof record.name !== 'string' || !TOOL_NAME.test(record.name)) {
    throw new PluginLoadProblem(`${where}: name: expected a tool name: 1-64 letters, digits, _ or -, starting with a letter`);
  }
  if (typeof record.description !== 'string' || record.description === '') {
    throw new PluginLoadProblem(`${where}: description: expected a non-empty string`);
  }
  const parameters = record.parameters;
  if (parameters === null || typeof parameters !== 'object' || Array.isArray(parameters)) {
    throw new PluginLoadProblem(`${where}: parameters: expected a JSON schema object`);
  }
  if (typeof record.execute !== 'function') throw new PluginLoadProblem(`${where}: execute: expected a function`);
  return value as PluginToolDefinition;
}

function wrap(set: PluginSet, definition: PluginToolDefinition, context: ExternalToolContext): ExternalTool {
  const override = set.manifest.overrides[definition.name] ?? {};
  const approval = override.approval ?? set.manifest.approval;
  const pathArguments = override.pathArguments ?? [];
  return {
    name: definition.name,
    description: definition.description,
    parameters: definition.parameters,
    set: set.name,
    source: set.source,
    runner: 'plugin',
    catalogs: override.catalogs ?? set.manifest.catalogs,
    declaredApproval: approval,
    facts: { pathArguments, automatic: approval === 'always' && set.authorApproval },
    execute: async (input, toolContext) => {
      const fenced = fencePathArguments(inputObject(input), pathArguments, context.workspace);
      const output = await runWithin(set.manifest.timeoutSeconds, toolContext, (signal) =>
        definition.execute(fenced, {
          signal,
          callId: toolContext.callId,
          workspace: context.workspace,
          sessionId: context.sessionId(),
        }),
      );
      return checkOutput(output, acceptsImages(context));
    },
  };
}

/** Runs `work` with a signal that aborts on the call's cancel or the set's timer; either fails the call at once. */
async function runWithin<T>(
  seconds: number | null,
  toolContext: ToolContext,
  work: (signal: AbortSignal) => Promise<T> | T,
): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const stopped = new Promise<never>((_, reject) => {
    onAbort = () => {
      controller.abort();
      reject(new Error(CANCELLED_TOOL_TEXT));
    };
    if (toolContext.signal.aborted) onAbort();
    else toolContext.signal.addEventListener('abort', onAbort, { once: true });
    if (seconds !== null) {
      timer = setTimeout(() => {
        controller.abort();
        reject(new Error(timeoutText(seconds)));
      }, seconds * 1000);
    }
  });
  try {
    return await Promise.race([Promise.resolve().then(() => work(controller.signal)), stopped]);
  } finally {
    if (timer) clearTimeout(timer);
    if (onAbort) toolContext.signal.removeEventListener('abort', onAbort);
  }
}

/** Plugin output is untrusted: text is capped, images are checked, unknown parts fail the call. */
function checkOutput(output: unknown, imageInput: boolean): ToolOutput {
  if (typeof output === 'string') return capToolOutput(output);
  if (!Array.isArray(output)) throw new Error('The plugin tool returned neither text nor an array of text and image parts.');
  const parts: ToolResultContent[] = [];
  let images = 0;
  for (const [index, part] of output.entries()) {
    const record = part !== null && typeof part === 'object' ? (part as Record<string, unknown>) : {};
    if (record.type === 'text' && typeof record.text === 'string') {
      parts.push({ type: 'text', text: capToolOutput(record.text) });
      continue;
    }
    if (record.type !== 'image') throw new Error(`The plugin tool's part [${index}] is neither a text nor an image part.`);
    if (!imageInput) throw new Error(TEXT_ONLY_IMAGE_ERROR);
    if (++images > MAX_TOOL_IMAGES) throw new Error(`The plugin tool returned more than ${MAX_TOOL_IMAGES} images.`);
    parts.push(imagePart(record, `part [${index}]`));
  }
  return parts;
}

function imagePart(record: Record<string, unknown>, label: string): ImagePart {
  const mime = typeof record.mime === 'string' ? record.mime : '';
  const name = typeof record.name === 'string' ? { name: record.name } : {};
  if (typeof record.data === 'string') {
    const bytes = decodeBase64(record.data, label);
    checkToolImage(bytes, mime, label);
    return { type: 'image', mime, data: bytes.toString('base64'), ...name };
  }
  if (typeof record.uri === 'string' && URL.canParse(record.uri)) {
    if (!(TOOL_IMAGE_MIME_TYPES as readonly string[]).includes(mime)) {
      throw new Error(
        `The plugin tool's ${label}: mime ${JSON.stringify(mime)} is not one of ${TOOL_IMAGE_MIME_TYPES.join(', ')}.`,
      );
    }
    return { type: 'image', mime, uri: record.uri, ...name };
  }
  throw new Error(`The plugin tool's ${label} needs base64 data or an absolute uri.`);
}
