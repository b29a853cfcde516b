/**
 * `bash` (TOOLS-2, BASH-1, BASH-2): runs a command with `/bin/bash -c` (plain `sh` where bash is
 * missing) in the workspace root, in its own process group, so a timeout or a cancel stops the
 * command and everything it started. Output (stdout and stderr interleaved, each chunk labelled with its stream) streams to the host
 * as it arrives and is kept in bounded memory: the first and the last 40,000 characters, the cap
 * stated where the middle was dropped. The result is `exit <code>\n<output>`; a non-zero exit, a
 * timeout and a cancel are failures (a thrown `ToolFailure`, so the executor marks the result
 * `isError`).
 */
import { existsSync } from 'node:fs';
import { constants } from 'node:os';
import type { ToolDefinition } from '@crystal/core';
import type { ContainedCommand } from '../../containment.js';
import { runInProcessGroup } from '../process-group.js';
import { lazySchema, parseArgs } from './args.js';
import * as z from 'zod/mini';
import { ToolFailure } from './failure.js';
import type { ToolHost } from './host.js';
import { capOutput, HeadTailCollector } from './output-cap.js';

export const BASH_HEAD_CHARS = 40_000;
export const BASH_TAIL_CHARS = 40_000;

const schema = lazySchema(() =>
  z.object({
    command: z.string().check(z.minLength(1)),
    timeout: z.optional(z.number().check(z.positive())),
  }),
);

export function bashTool(host: ToolHost): ToolDefinition {
  return {
    name: 'bash',
    description:
      'Run a shell command with bash in the workspace root and return "exit <code>" followed by its combined output. The command runs without a terminal and with no input; do not start interactive programs. Long output keeps its first and last 40000 characters. timeout (seconds) may shorten the configured per-command timer.',
    parameters: {
      type: 'object',
      properties: {
        command: { type: 'string', description: 'The command line, for example "npm test".' },
        timeout: {
          type: 'number',
          exclusiveMinimum: 0,
          description: 'Seconds before the command is stopped (at most the configured timer).',
        },
      },
      required: ['command'],
      additionalProperties: false,
    },
    async execute(input, { signal, callId }) {
      const args = parseArgs('bash', schema(), input);
      const timeoutMs = effectiveTimeout(host.bashTimeoutMs, args.timeout);
      const collector = new HeadTailCollector(
        BASH_HEAD_CHARS,
        BASH_TAIL_CHARS,
        `the output cap keeps the first ${BASH_HEAD_CHARS} and the last ${BASH_TAIL_CHARS} characters`,
      );
      let contained: ContainedCommand | undefined;
      // SBX-1: the sandbox is detected on the first command (issue 22 item 4).
      await host.containment?.resolve();
      const result = await runInProcessGroup(shellCommand(args.command), {
        cwd: host.workspace,
        timeoutMs,
        signal,
        ...(host.env ? { env: host.env } : {}),
        ...(host.containment?.sandboxed
          ? {
              contain: (argv, env) => {
                contained = host.containment?.wrap({ argv, cwd: host.workspace, env, callId });
                return contained;
              },
            }
          : {}),
        // Our collector keeps the output; the runner's own copy only needs to stay small.
        maxOutputBytes: 64 * 1024,
        onOutput: (chunk, stream) => {
          collector.push(chunk);
          host.onOutput?.(callId, chunk, stream);
        },
      }).catch((error: unknown) => {
        throw new ToolFailure(`The command could not start: ${error instanceof Error ? error.message : String(error)}.`);
      });
      const output = collector.text();
      if (result.timedOut) {
        const seconds = formatSeconds(timeoutMs ?? 0);
        throw new ToolFailure(capOutput(`The command timed out after ${seconds} seconds.${output ? `\n${output}` : ''}`));
      }
      if (result.cancelled) throw new ToolFailure(capOutput(`The command was cancelled.${output ? `\n${output}` : ''}`));
      const code = result.exitCode ?? 128 + (result.signal ? (constants.signals[result.signal] ?? 0) : 0);
      const refusals = code !== 0 && contained && host.containment ? host.containment.explain(output, contained) : [];
      const text = capOutput(`exit ${code}\n${output}`);
      if (code !== 0) throw new ToolFailure(refusals.length > 0 ? `${text}\n${refusals.join('\n')}` : text);
      return text;
    },
  };
}

/** The configured timer; the model's `timeout` may only shorten it (or set one when it is unlimited). */
export function effectiveTimeout(configured: number | null, requestedSeconds: number | undefined): number | null {
  if (requestedSeconds === undefined) return configured;
  const requested = Math.ceil(requestedSeconds * 1000);
  return configured === null ? requested : Math.min(configured, requested);
}

/** The command for `runInProcessGroup` (which starts `/bin/sh -c`): exec bash in the same process. */
export function shellCommand(command: string): string {
  if (!existsSync('/bin/bash')) return command;
  return `exec /bin/bash -c '${command.replace(/'/g, `'\\''`)}'`;
}

function formatSeconds(ms: number): string {
  const seconds = ms / 1000;
  return Number.isInteger(seconds) ? String(seconds) : seconds.toFixed(3).replace(/0+$/, '');
}
