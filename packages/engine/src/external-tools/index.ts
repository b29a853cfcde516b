/**
 * External tool sets (TOOLS-4): discovery, exec tools and in-process plugin tools. Loading never
 * throws: every set or tool that cannot be used is left out with a note, and start-up goes on.
 */
import { CLASSIFIED_BUILT_INS, type ExternalToolFacts } from '../approval/classifier.js';
import type { Discovery } from './discover.js';
import { createExecTool } from './exec-tool.js';
import type { ExternalTool, ExternalToolContext } from './external-tool.js';
import type { Catalog } from './manifest.js';
import { untrustedProjectCodeNote } from '../trust.js';
import { assertProjectCodeMayRun, isPluginSet, loadPluginTools, PluginLoadProblem, UntrustedProjectCode } from './plugin-tool.js';

export { type ContentOutputOptions, parseContentOutput } from './content-output.js';
export * from './discover.js';
export { createExecTool, executableOf, flagsOf } from './exec-tool.js';
export * from './external-tool.js';
export { MAX_TOOL_IMAGE_BYTES, MAX_TOOL_IMAGES, TEXT_ONLY_IMAGE_ERROR, TOOL_IMAGE_MIME_TYPES } from './image-bytes.js';
export * from './manifest.js';
export * from './plugin-tool.js';

export interface LoadedExternalTools {
  /** In set-name order, each set's tools in manifest (or export) order. */
  readonly tools: readonly ExternalTool[];
  /** Discovery notes plus one note per set or tool left out here. */
  readonly notes: readonly string[];
}

/**
 * Creates the tools of every discovered set. A built-in name (those the approval classifier knows,
 * plus `reserved`) wins, and a later duplicate is dropped; both with a note. A plugin module that fails to load skips its set.
 */
export async function loadExternalTools(
  discovery: Discovery,
  context: ExternalToolContext,
  reserved: readonly string[] = [],
): Promise<LoadedExternalTools> {
  const notes = [...discovery.notes];
  // Every name the host classifies as a built-in is reserved, registered this turn or not.
  const owners = new Map<string, string>([...CLASSIFIED_BUILT_INS, ...reserved].map((name) => [name, 'built-in']));
  const tools: ExternalTool[] = [];
  // SEC-1: project code of an untrusted workspace is left out, with one note for all of it.
  const untrusted = [...(discovery.untrusted ?? [])];
  for (const set of discovery.sets) {
    let created: ExternalTool[];
    try {
      assertProjectCodeMayRun(set, context);
    } catch (error) {
      if (!(error instanceof UntrustedProjectCode)) throw error;
      untrusted.push(set.dir);
      continue;
    }
    if (isPluginSet(set)) {
      try {
        created = await loadPluginTools(set, context);
      } catch (error) {
        if (!(error instanceof PluginLoadProblem)) throw error;
        notes.push(`${set.manifestPath}: ${error.message}; the ${set.source} tool set ${set.name} was skipped.`);
        continue;
      }
    } else if (set.manifest.runner === 'exec') {
      created = set.manifest.tools.map((spec) => createExecTool(set, spec, context));
    } else {
      continue;
    }
    for (const tool of created) {
      const owner = owners.get(tool.name);
      if (owner) {
        const by = owner === 'built-in' ? 'a built-in tool' : `the tool set ${owner}`;
        notes.push(`The tool ${tool.name} of the ${set.source} tool set ${set.name} was left out: ${by} already has that name.`);
        continue;
      }
      owners.set(tool.name, set.name);
      tools.push(tool);
    }
  }
  if (untrusted.length > 0) notes.push(untrustedProjectCodeNote(context.projectCode, untrusted));
  return { tools, notes };
}

/** The external tools offered in Plan or Work (`catalogs`). */
export function externalToolsFor(tools: readonly ExternalTool[], catalog: Catalog): ExternalTool[] {
  return tools.filter((tool) => tool.catalogs.includes(catalog));
}

/** The lookup the approval classifier and policy take as `externalTool`. */
export function externalToolFacts(tools: readonly ExternalTool[]): (name: string) => ExternalToolFacts | undefined {
  const byName = new Map(tools.map((tool) => [tool.name, tool.facts]));
  return (name) => byName.get(name);
}
