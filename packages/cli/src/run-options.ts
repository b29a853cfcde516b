/** Parses and checks `crystal run` options (CLI-2); any problem is a UsageError (exit 1). */
import { parseArgs } from 'node:util';
import { MAX_TIMER_SECONDS, THINKING_EFFORTS, type RunLimits, type ThinkingEffort } from '@crystal/core';
import type { ApprovalModelFlags } from '@crystal/engine';
import { type ApprovalMode, parseApprovalMode, UsageError } from '@crystal/engine/early';

export type RunFormat = 'text' | 'json' | 'stream-json';

export interface RunOptions {
  readonly prompt: string | undefined;
  readonly provider?: string | undefined;
  readonly model?: string | undefined;
  readonly workspace?: string | undefined;
  readonly home?: string | undefined;
  readonly approval?: ApprovalMode | undefined;
  /** REV-2: `--approval-model on|off`, `--approval-provider`, `--approval-model-id`, `--approval-thinking` (process only). */
  readonly approvalModel?: ApprovalModelFlags | undefined;
  readonly plan: boolean;
  readonly thinking?: ThinkingEffort | undefined;
  readonly limits: Partial<RunLimits>;
  readonly bashTimeoutSeconds?: number | null | undefined;
  readonly format: RunFormat;
  readonly images: readonly string[];
  readonly resume?: string | undefined;
  readonly continue: boolean;
  readonly showThinking: boolean;
  /** `--skills on|off` (SKILL-1); absent means config.json `skills`, default on. */
  readonly skills?: boolean | undefined;
  /** `--trust-workspace`: load project code in an untrusted workspace (SEC-1, CLI-8). */
  readonly trustWorkspace: boolean;
}

export function parseRunOptions(argv: readonly string[]): RunOptions {
  let parsed: ReturnType<typeof parse>;
  try {
    // No arguments (`crystal`, or `crystal --inline` once the view flag is taken): nothing to
    // read, and parseArgs's first call costs a terminal start most of a millisecond (issue 22).
    parsed = argv.length === 0 ? { values: {}, positionals: [] } : parse(argv);
  } catch (error) {
    throw new UsageError(`${(error as Error).message}. Run 'crystal run --help' for the options.`);
  }
  const v = parsed.values;
  if (v.plan && v.work) throw new UsageError('--plan and --work cannot be passed together; choose one.');
  const format = v.format ?? 'text';
  if (format !== 'text' && format !== 'json' && format !== 'stream-json') {
    throw new UsageError(`--format must be text, json or stream-json, not '${format}'.`);
  }
  const approval = v.approval === undefined ? undefined : parseApprovalMode(v.approval);
  if (v.approval !== undefined && approval === undefined) {
    throw new UsageError(`--approval must be default, edit, review, audit or full, not '${v.approval}'.`);
  }
  const thinking = gearFlag('--thinking', v.thinking);
  const approvalModel: ApprovalModelFlags = {
    ...(v['approval-model'] !== undefined ? { enabled: onOff('--approval-model', v['approval-model']) } : {}),
    ...(v['approval-provider'] !== undefined ? { provider: v['approval-provider'] } : {}),
    ...(v['approval-model-id'] !== undefined ? { model: v['approval-model-id'] } : {}),
    ...(v['approval-thinking'] !== undefined ? { thinking: gearFlag('--approval-thinking', v['approval-thinking']) } : {}),
  };
  if (approvalModel.enabled === false && (approvalModel.provider !== undefined || approvalModel.model !== undefined)) {
    throw new UsageError('--approval-model off cannot be combined with --approval-provider or --approval-model-id.');
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
  const skills = onOff('--skills', v.skills);
  const prompt = parsed.positionals.length > 0 ? parsed.positionals.join(' ') : undefined;
  return {
    prompt,
    provider: v.provider,
    model: v.model,
    workspace: v.workspace,
    home: v.home,
    approval,
    ...(Object.keys(approvalModel).length > 0 ? { approvalModel } : {}),
    plan: v.plan === true,
    thinking,
    limits,
    ...(bash === undefined ? {} : { bashTimeoutSeconds: bash }),
    format,
    images: v.image ?? [],
    resume: v.resume,
    continue: v.continue === true,
    showThinking: v['show-thinking'] === true,
    ...(skills === undefined ? {} : { skills }),
    trustWorkspace: v['trust-workspace'] === true,
  };
}

/** The options of `crystal run` (and of `crystal` and `crystal web`, which share them). */
export const OPTIONS = {
  provider: { type: 'string', short: 'p' },
  model: { type: 'string', short: 'm' },
  workspace: { type: 'string', short: 'w' },
  home: { type: 'string' },
  approval: { type: 'string' },
  'approval-model': { type: 'string' },
  'approval-provider': { type: 'string' },
  'approval-model-id': { type: 'string' },
  'approval-thinking': { type: 'string' },
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
  skills: { type: 'string' },
  'trust-workspace': { type: 'boolean' },
} as const satisfies Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }>;

type Parsed = ReturnType<typeof parseArgs<{ args: string[]; allowPositionals: true; strict: true; options: typeof OPTIONS }>>;

function parse(argv: readonly string[]): Parsed {
  return parsePlain(argv) ?? parseArgs({ args: [...argv], allowPositionals: true, strict: true, options: OPTIONS });
}

/**
 * The common command line (`--format json "prompt"`) read directly: node:util's parseArgs costs
 * its first call ~0.5 ms, before every `crystal run`'s first request (issue 22 item 4). Only
 * long options of OPTIONS written `--name value` or `--flag`, and positionals, are read here, with
 * parseArgs's result; anything else (`--name=value`, short options, `--`, an unknown option, a
 * value that starts with `-`, a missing value) returns undefined and goes to parseArgs, which
 * reads it or reports it in its own words. cli/test/run-options.test.ts compares the two.
 */
export function parsePlain(argv: readonly string[]): Parsed | undefined {
  const values: Record<string, string | boolean | string[]> = Object.create(null);
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (!arg.startsWith('-') || arg === '-') {
      positionals.push(arg);
      continue;
    }
    if (!arg.startsWith('--') || arg === '--' || arg.includes('=')) return undefined;
    const name = arg.slice(2);
    if (!Object.hasOwn(OPTIONS, name)) return undefined;
    const option: { type: 'string' | 'boolean'; multiple?: boolean } = OPTIONS[name as keyof typeof OPTIONS];
    if (option.type === 'boolean') {
      values[name] = true;
      continue;
    }
    const value = argv[i + 1];
    if (value === undefined || value.startsWith('-')) return undefined;
    i++;
    if (option.multiple) values[name] = [...((values[name] as string[] | undefined) ?? []), value];
    else values[name] = value;
  }
  return { values, positionals } as unknown as Parsed;
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

function gearFlag(flag: string, raw: string | undefined): ThinkingEffort | undefined {
  if (raw === undefined) return undefined;
  const value = raw === 'none' ? 'off' : raw === 'max' ? 'maximum' : raw;
  if (!(THINKING_EFFORTS as readonly string[]).includes(value)) {
    throw new UsageError(`${flag} must be one of ${THINKING_EFFORTS.join(', ')}, not '${raw}'.`);
  }
  return value as ThinkingEffort;
}

function onOff(flag: string, value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  if (value === 'on') return true;
  if (value === 'off') return false;
  throw new UsageError(`${flag} must be on or off, not '${value}'.`);
}
