/**
 * An `exec` external tool (TOOLS-4): runs the manifest's argv (no shell, no templating) in the
 * workspace with the call's fenced JSON arguments on stdin, under the set's own `timeoutSeconds`
 * (default 120, `"unlimited"` allowed), independent of `bashTimeoutSeconds` (BASH-3). A timeout or
 * a cancel kills the whole process group. Non-zero exit fails the call; the output is stdout then
 * stderr, capped. `"output": "content"` returns text and image parts (IMG-18, IMG-19).
 */
import { existsSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import type { ToolContext, ToolOutput } from '@crystal/core';
import type { ContainedCommand } from '../containment.js';
import { expandHome } from '../tools/fence.js';
import { parseContentOutput } from './content-output.js';
import { assertProjectCodeMayRun } from './plugin-tool.js';
import type { ToolSet } from './discover.js';
import { acceptsImages, CANCELLED_TOOL_TEXT, type ExternalTool, type ExternalToolContext, timeoutText } from './external-tool.js';
import { MAX_TOOL_IMAGE_BYTES, MAX_TOOL_IMAGES } from './image-bytes.js';
import type { ExecToolSpec } from './manifest.js';
import { capToolOutput } from './output-cap.js';
import { fencePathArguments, inputObject } from './path-arguments.js';
import { type ArgvRunResult, runArgv } from './run-argv.js';

/** Enough bytes for the 100,000-character cap in any encoding. */
const TEXT_STREAM_BYTES = 512 * 1024;
/** Eight 20 MiB images in base64 plus room for the text. */
const CONTENT_STDOUT_BYTES = MAX_TOOL_IMAGES * Math.ceil((MAX_TOOL_IMAGE_BYTES * 4) / 3) + 1024 * 1024;

/** Throws `UntrustedProjectCode` for a project set in an untrusted workspace (SEC-1). */
export function createExecTool(set: ToolSet, spec: ExecToolSpec, context: ExternalToolContext): ExternalTool {
  assertProjectCodeMayRun(set, context);
  return {
    name: spec.name,
    description: spec.description,
    parameters: spec.parameters,
    set: set.name,
    source: set.source,
    runner: 'exec',
    catalogs: spec.catalogs,
    declaredApproval: spec.approval,
    facts: { pathArguments: spec.pathArguments, automatic: spec.approval === 'always' && set.authorApproval },
    execute: (input, toolContext) => runExecTool(set, spec, context, input, toolContext),
  };
}

async function runExecTool(
  set: ToolSet,
  spec: ExecToolSpec,
  context: ExternalToolContext,
  input: unknown,
  toolContext: ToolContext,
): Promise<ToolOutput> {
  const fenced = fencePathArguments(inputObject(input), spec.pathArguments, context.workspace);
  const [program, ...prefix] = spec.command as [string, ...string[]];
  const args = [...prefix, ...flagsOf(spec.argv, fenced)];
  const seconds = set.manifest.timeoutSeconds;
  let contained: ContainedCommand | undefined;
  // SBX-1: the sandbox is detected on the first command (issue 22 item 4).
  await context.containment?.resolve();
  const containment = context.containment?.sandboxed ? context.containment : undefined;
  const result = await runArgv(executableOf(program, set.dir), args, {
    cwd: context.workspace,
    env: childEnv(context),
    ...(spec.stdin ? { stdin: JSON.stringify(fenced) } : {}),
    timeoutMs: seconds === null ? null : seconds * 1000,
    signal: toolContext.signal,
    ...(context.killGraceMs !== undefined ? { killGraceMs: context.killGraceMs } : {}),
    maxStdoutBytes: spec.output === 'content' ? CONTENT_STDOUT_BYTES : TEXT_STREAM_BYTES,
    maxStderrBytes: TEXT_STREAM_BYTES,
    ...(containment
      ? {
          contain: (argv: readonly [string, ...string[]], env: NodeJS.ProcessEnv) => {
            // The set's own folder stays readable (it may sit in the temp the sandbox makes private).
            contained = containment.wrap({ argv, cwd: context.workspace, env, callId: toolContext.callId, readable: [set.dir] });
            return contained;
          },
        }
      : {}),
  });
  if (result.timedOut) throw new Error(timeoutText(seconds ?? 0));
  if (result.cancelled) throw new Error(CANCELLED_TOOL_TEXT);
  const stdout = result.stdout.toString('utf8');
  const stderr = result.stderr.toString('utf8');
  if (result.exitCode !== 0) {
    const text = capToolOutput(`${exitLine(result)}\n${joinStreams(stdout, stderr)}`);
    const refusals = contained && containment ? containment.explain(`${stdout}\n${stderr}`, contained) : [];
    throw new Error(refusals.length > 0 ? `${text}\n${refusals.join('\n')}` : text);
  }
  if (spec.output === 'text') return capToolOutput(joinStreams(stdout, stderr));
  if (result.stdoutDropped > 0) {
    throw new Error(`The tool wrote more than ${CONTENT_STDOUT_BYTES} bytes to stdout; content output is limited to that.`);
  }
  const parts = await parseContentOutput(stdout, capToolOutput(stderr), {
    workspace: context.workspace,
    imageInput: acceptsImages(context),
  });
  return parts.map((part) => (part.type === 'text' ? { ...part, text: capToolOutput(part.text) } : part));
}

function exitLine(result: ArgvRunResult): string {
  return result.exitCode === null ? `killed by ${result.signal ?? 'a signal'}` : `exit ${result.exitCode}`;
}

function joinStreams(stdout: string, stderr: string): string {
  if (stderr === '' || stdout === '' || stdout.endsWith('\n')) return stdout + stderr;
  return `${stdout}\n${stderr}`;
}

/**
 * `argv`: each mapped property present in the input appends flags in map order. A scalar appends
 * `flag value`; an array of strings repeats the flag per element; objects, nulls and other arrays
 * fail the call.
 */
export function flagsOf(argv: readonly (readonly [string, string])[], input: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const [property, flag] of argv) {
    const value = input[property];
    if (value === undefined) continue;
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') out.push(flag, String(value));
    else if (Array.isArray(value) && value.every((v) => typeof v === 'string')) for (const v of value) out.push(flag, v);
    else {
      throw new Error(`The argument ${property} maps to ${flag} and must be a string, number, boolean or array of strings.`);
    }
  }
  return out;
}

/** A bare name resolves inside the set directory first, then through PATH; a relative path is relative to the set. */
export function executableOf(program: string, setDir: string): string {
  const expanded = expandHome(program);
  if (isAbsolute(expanded)) return expanded;
  if (!expanded.includes('/')) {
    const local = join(setDir, expanded);
    return existsSync(local) ? local : expanded;
  }
  return resolve(setDir, expanded);
}

/** The host environment plus `CRYSTAL_WORKSPACE`, `CRYSTAL_SESSION`, `CRYSTAL_APPROVAL`; never `CRYSTAL_HOME`. */
function childEnv(context: ExternalToolContext): NodeJS.ProcessEnv {
  const { CRYSTAL_HOME: _home, ...env } = context.env ?? process.env;
  return {
    ...env,
    CRYSTAL_WORKSPACE: context.workspace,
    CRYSTAL_SESSION: context.sessionId(),
    CRYSTAL_APPROVAL: context.approvalMode(),
  };
}
