/** Parses and checks `crystal run` options (CLI-2); any problem is a UsageError (exit 1). */
import { parseArgs } from 'node:util';
import { MAX_TIMER_SECONDS, THINKING_EFFORTS, type RunLimits, type ThinkingEffort } from '@crystal/core';
import { UsageError } from '@crystal/engine';

export type RunFormat = 'text' | 'json' | 'stream-json';

export interface RunOptions {
  readonly prompt: string | undefined;
  readonly provider?: string | undefined;
  readonly model?: string | undefined;
  readonly workspace?: string | undefined;
  readonly home?: string | undefined;
  readonly approval?: 'default' | 'edit' | 'full' | undefined;
  readonly plan: boolean;
  readonly thinking?: ThinkingEffort | undefined;
  readonly limits: Partial<RunLimits>;
  readonly bashTimeoutSeconds?: number | null | undefined;
  readonly format: RunFormat;
  readonly images: readonly string[];
  readonly resume?: string | undefined;
  readonly continue: boolean;
  readonly showThinking: boolean;
  /** `--trust-workspace`: load project code in an untrusted workspace (SEC-1, CLI-8). */
  readonly trustWorkspace: boolean;
}

export function parseRunOptions(argv: readonly string[]): RunOptions {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    throw new UsageError(`${(error as Error).message}. Run 'crystal run --help' for the options.`);
  }
  const v = parsed.values;
  if (v.plan && v.work) throw new UsageError('--plan and --work cannot be passed together; choose one.');
  const format = v.format ?? 'text';
  if (format !== 'text' && format !== 'json' && format !== 'stream-json') {
    throw new UsageError(`--format must be text, json or stream-json, not '${format}'.`);
  }
  const approval = v.approval;
  if (approval !== undefined && approval !== 'default' && approval !== 'edit' && approval !== 'full') {
    throw new UsageError(`--approval must be default, edit or full, not '${approval}'.`);
  }
  let thinking: ThinkingEffort | undefined;
  if (v.thinking !== undefined) {
    const value = v.thinking === 'none' ? 'off' : v.thinking === 'max' ? 'maximum' : v.thinking;
    if (!(THINKING_EFFORTS as readonly string[]).includes(value)) {
      throw new UsageError(`--thinking must be one of ${THINKING_EFFORTS.join(', ')}, not '${v.thinking}'.`);
    }
    thinking = value as ThinkingEffort;
  }
  if (v.resume !== undefined && v.continue) throw new UsageError('--resume and --continue cannot be passed together.');
  const limits: { -readonly [K in keyof RunLimits]?: RunLimits[K] } = {};
  const modelCalls = countFlag('--model-calls', v['model-calls'], 1);
  if (modelCalls !== undefined) limits.maxModelCalls = modelCalls;
  const toolCalls = countFlag('--tool-calls', v['tool-calls'], 0);
  if (toolCalls !== undefined) limits.maxToolCalls = toolCalls;
  const duration = countFlag('--duration', v.duration, 1, MAX_TIMER_SECONDS);
  if (duration !== undefined) limits.maxDurationMs = duration === null ? null : duration * 1000;
  const bash = countFlag('--bash-timeout', v['bash-timeout'], 1, MAX_TIMER_SECONDS);
  const prompt = parsed.positionals.length > 0 ? parsed.positionals.join(' ') : undefined;
  return {
    prompt,
    provider: v.provider,
    model: v.model,
    workspace: v.workspace,
    home: v.home,
    approval,
    plan: v.plan === true,
    thinking,
    limits,
    ...(bash === undefined ? {} : { bashTimeoutSeconds: bash }),
    format,
    images: v.image ?? [],
    resume: v.resume,
    continue: v.continue === true,
    showThinking: v['show-thinking'] === true,
    trustWorkspace: v['trust-workspace'] === true,
  };
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      provider: { type: 'string', short: 'p' },
      model: { type: 'string', short: 'm' },
      workspace: { type: 'string', short: 'w' },
      home: { type: 'string' },
      approval: { type: 'string' },
      plan: { type: 'boolean' },
      work: { type: 'boolean' },
      thinking: { type: 'string' },
      'model-calls': { type: 'string' },
      'tool-calls': { type: 'string' },
      duration: { type: 'string' },
      'bash-timeout': { type: 'string' },
      format: { type: 'string' },
      image: { type: 'string', multiple: true },
      resume: { type: 'string' },
      continue: { type: 'boolean' },
      'show-thinking': { type: 'boolean' },
      'trust-workspace': { type: 'boolean' },
    },
  });
}

/** `N` or `unlimited`; returns null for unlimited. */
function countFlag(
  flag: string,
  value: string | undefined,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number | null | undefined {
  if (value === undefined) return undefined;
  if (value === 'unlimited') return null;
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new UsageError(`${flag} must be an integer from ${min} to ${max}, or "unlimited"; got '${value}'.`);
  }
  return n;
}
