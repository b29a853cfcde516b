/**
 * The `config.json` schema (CONF-2), validated with zod so every error names its key path.
 * `zod/mini` rather than classic zod: the same validator at a twentieth of the bundle, which
 * keeps `crystal run` start-up fast (bench/run-stream.mjs).
 */
import * as z from 'zod/mini';
import { lazySchema } from '../lazy-schema.js';

const positiveInt = () => z.int().check(z.positive());
/**
 * 100000000 as "100,000,000" without Intl: the first `toLocaleString` loads ICU's number data,
 * 20 ms or more of every start, and this module is read before the first request (issue 22 item 4).
 */
const grouped = (n: number): string => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
/** REL-12: every number has a ceiling, so `1e15` or `1e400` (Infinity) is an error, not a setting. */
const upTo = (max: number, what = '') => z.maximum(max, `expected at most ${grouped(max)}${what}`);
const effort = lazySchema(() =>
  z.pipe(
    z.enum(['default', 'off', 'none', 'minimal', 'low', 'medium', 'high', 'maximum', 'max']),
    z.transform((value) => (value === 'none' ? 'off' : value === 'max' ? 'maximum' : value)),
  ),
);
const TIMER_MAX = 'expected at most 2147483 seconds (the runtime timer maximum)';

const modelSchema = lazySchema(() =>
  z.object({
    contextWindow: positiveInt().check(upTo(100_000_000, ' tokens')),
    maxTokens: z.optional(positiveInt().check(upTo(100_000_000, ' tokens'))),
    temperature: z.optional(z.number().check(z.minimum(0), z.maximum(2))),
    thinking: z.optional(z.boolean()),
    thinkingEfforts: z.optional(z.array(effort())),
    imageInput: z.optional(z.boolean()),
    audioInput: z.optional(z.boolean()),
    videoInput: z.optional(z.boolean()),
    serviceTier: z.optional(z.string()),
    speed: z.optional(z.string()),
  }),
);

const protocolSchema = () => z.enum(['responses', 'openai', 'deepseek', 'anthropic', 'gemini', 'ollama']);
// SEC-9: only http and https; file:, ftp:, javascript: and the like never reach a request.
const baseUriSchema = () =>
  z.url({
    protocol: /^https?$/,
    error:
      'expected an absolute http:// or https:// URL such as "https://api.openai.com/v1/" (other schemes such as file:, ftp: or javascript: are refused); fix the baseUri in config.json',
  });

/** The shape of a complete provider entry (the types below; load.ts checks a new provider's keys). */
const providerSchema = () =>
  z.object({
    protocol: protocolSchema(),
    baseUri: baseUriSchema(),
    apiKey: z.optional(z.string()),
    apiKeyEnvironment: z.optional(z.string()),
    requiresApiKey: z.optional(z.boolean()),
    models: z.record(z.string(), modelSchema()),
  });

/**
 * A `providers` entry in config.json. A built-in provider's entry may be partial (only
 * `apiKey`, or one more model): it overlays the starter entry (SETUP-4). A new provider needs
 * `protocol`, `baseUri` and `models`, which load.ts checks with the key's line.
 */
const providerEntrySchema = lazySchema(() =>
  z.object({
    protocol: z.optional(protocolSchema()),
    baseUri: z.optional(baseUriSchema()),
    apiKey: z.optional(z.string()),
    apiKeyEnvironment: z.optional(z.string()),
    requiresApiKey: z.optional(z.boolean()),
    models: z.optional(z.record(z.string(), modelSchema())),
  }),
);

/** Built with its section (issue 22 item 4: a config without one builds nothing of it). */
const executionBudgetSchema = () =>
  z.union([
    z.literal('unlimited'),
    z.object({
      maximumModelCalls: z.optional(z.nullable(positiveInt().check(upTo(1_000_000)))),
      maximumToolCalls: z.optional(z.nullable(z.int().check(z.minimum(0), upTo(1_000_000)))),
      maximumDurationSeconds: z.optional(z.nullable(positiveInt().check(z.maximum(2147483, TIMER_MAX)))),
    }),
  ]);

const sandboxMode = () => z.enum(['off', 'workspace-write']);
/** SBX-1: `"off"`, `"workspace-write"` (the default where the OS has a sandbox), or the object form with network hosts. */
const sandboxSchema = () =>
  z.union([
    sandboxMode(),
    z.object({
      mode: z.optional(sandboxMode()),
      network: z.optional(
        z.object({
          allow: z.array(
            z
              .string()
              .check(
                z.regex(
                  /^(\*|(\*\.)?[A-Za-z0-9.-]+(:\d+)?)$/,
                  'a host name such as "registry.npmjs.org", "*.github.com", "host:port", or "*" for any host',
                ),
              ),
          ),
        }),
      ),
    }),
  ]);

/**
 * The sections of `config.json`, each built on first use (issue 22 item 4: building every
 * section's schema costs start-up time, and a config uses a few of them).
 */
const configSections = {
  provider: () => z.optional(z.string()),
  model: () => z.optional(z.string()),
  thinkingEffort: () => z.optional(effort()),
  /** Legacy `autoedit` is edit; `fullreview` and `full-review` are audit (reference §2.2). */
  approval: () =>
    z.optional(
      z.pipe(
        z.enum(['default', 'edit', 'review', 'audit', 'full', 'autoedit', 'fullreview', 'full-review']),
        z.transform((v) => (v === 'autoedit' ? 'edit' : v === 'fullreview' || v === 'full-review' ? 'audit' : v)),
      ),
    ),
  /** REV-2: the reviewer's own model; omitted or `enabled: false` means the session model reviews. */
  approvalModel: () =>
    z.optional(
      z.object({
        enabled: z.optional(z.boolean()),
        provider: z.optional(z.string()),
        model: z.optional(z.string()),
        thinkingEffort: z.optional(effort()),
      }),
    ),
  /** REV-3: auto-pass cards (default true); the ask card is always shown. */
  verboseApprovals: () => z.optional(z.boolean()),
  providers: () =>
    z.optional(
      z.record(
        z.string().check(z.regex(/^[A-Za-z0-9_-]+$/, 'provider names use letters, digits, - and _')),
        providerEntrySchema(),
      ),
    ),
  retry: () =>
    z.optional(
      z.object({
        maxRetries: z.optional(z.int().check(z.minimum(0), upTo(100, ' retries'))),
        baseDelaySeconds: z.optional(z.number().check(z.positive(), upTo(3600, ' seconds'))),
        backoffFactor: z.optional(z.number().check(z.minimum(1), upTo(100))),
        jitter: z.optional(z.number().check(z.minimum(0), z.maximum(1))),
        maxDelaySeconds: z.optional(z.number().check(z.positive(), z.maximum(2147483, TIMER_MAX))),
        /** REL-5: stream idle, connect and first-byte timeouts; REL-6: the longest Retry-After honoured. */
        idleTimeoutSeconds: z.optional(z.number().check(z.positive(), z.maximum(2147483, TIMER_MAX))),
        connectTimeoutSeconds: z.optional(z.number().check(z.positive(), z.maximum(2147483, TIMER_MAX))),
        firstByteTimeoutSeconds: z.optional(z.number().check(z.positive(), z.maximum(2147483, TIMER_MAX))),
        maxRetryAfterSeconds: z.optional(z.number().check(z.minimum(0), z.maximum(2147483, TIMER_MAX))),
      }),
    ),
  executionBudget: () => z.optional(executionBudgetSchema()),
  bashTimeoutSeconds: () =>
    z.optional(z.union([positiveInt().check(z.maximum(2147483, TIMER_MAX)), z.null(), z.literal('unlimited')])),
  imageModel: () => z.optional(z.object({ provider: z.string(), model: z.string(), thinkingEffort: z.optional(effort()) })),
  images: () =>
    z.optional(
      z.object({
        maxImageBytes: z.optional(positiveInt().check(upTo(1024 ** 3, ' bytes (1 GiB)'))),
        maxPixels: z.optional(positiveInt().check(upTo(1_000_000_000, ' pixels'))),
        maxImagesPerMessage: z.optional(positiveInt().check(upTo(1000, ' images'))),
        maxBatchBytes: z.optional(positiveInt().check(upTo(4 * 1024 ** 3, ' bytes (4 GiB)'))),
      }),
    ),
  /** Extra certificate authorities (PEM) for provider HTTPS, added to the defaults; relative to Home. */
  caFile: () => z.optional(z.string().check(z.minLength(1))),
  compactionThreshold: () => z.optional(z.number().check(z.gt(0), z.maximum(1))),
  /** CKPT-2: checkpoints of the files each turn changes (limits in bytes). */
  checkpoints: () =>
    z.optional(
      z.object({
        enabled: z.optional(z.boolean()),
        maxFileBytes: z.optional(positiveInt()),
        maxBinaryBytes: z.optional(positiveInt()),
        sessionCapBytes: z.optional(positiveInt()),
        globalCapBytes: z.optional(positiveInt()),
      }),
    ),
  /** Ask before entering an untrusted workspace in the interactive surfaces (default true). */
  workspaceTrust: () => z.optional(z.boolean()),
  /** MCP servers in Claude Code's format (MCP-2); each entry is checked by `@crystal/mcp`, a bad one is skipped with a note. */
  mcpServers: () => z.optional(z.record(z.string(), z.unknown())),
  /** SBX-1: the OS sandbox for bash and exec tools. */
  sandbox: () => z.optional(sandboxSchema()),
  /** SEC-6: variables children get although they look like secrets (`pass`). */
  shellEnvironment: () => z.optional(z.object({ pass: z.optional(z.array(z.string().check(z.minLength(1)))) })),
  /** The interactive terminal view (TUIX-8): `inline` (default) or `fullscreen`. */
  terminalView: () => z.optional(z.enum(['inline', 'fullscreen'])),
  /** Skills: the `skill` tool, the guidance and the skill-tree auto-pass (SKILL-1; default true). */
  skills: () => z.optional(z.boolean()),
  /** Sub-agents (AGENT-1..4): the `task` tool, parallel children per batch, the explore agent's model. */
  agents: () =>
    z.optional(
      z.object({
        enabled: z.optional(z.boolean()),
        maxParallel: z.optional(positiveInt().check(upTo(64, ' agents'))),
        explore: z.optional(z.object({ model: z.optional(z.string().check(z.minLength(1))) })),
      }),
    ),
  /** Hooks in Claude Code's shape (HOOK-1): `{ "PreToolUse": [{ "matcher", "hooks": [{ "type": "command", "command", "timeout" }] }] }`. */
  hooks: () => z.optional(z.record(z.string(), z.unknown())),
};

type ConfigShape = { [K in keyof typeof configSections]: ReturnType<(typeof configSections)[K]> };
const builtSections: Partial<ConfigShape> = {};
/** Stands for each section a config does not have (never parses anything: the key is absent). */
let absentSection: z.ZodMiniOptional<z.ZodMiniUnknown> | undefined;
/** Built through lazySchema, so zod's English messages are set before any section is built or parsed. */
const placeholder = lazySchema(() => z.optional(z.unknown()));

/**
 * The schema for one config value: its own sections fully, every other known key by a shared
 * placeholder, so the known keys (REL-12: unknown keys and their nearest known key) are all there.
 */
export function configSchemaFor(value: unknown): z.ZodMiniObject<ConfigShape> {
  const present = value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : {};
  absentSection ??= placeholder();
  const shape: Record<string, z.ZodMiniType> = {};
  for (const key of Object.keys(configSections) as Array<keyof ConfigShape>) {
    if (present[key] === undefined) {
      shape[key] = absentSection;
      continue;
    }
    const built = builtSections[key] ?? configSections[key]();
    (builtSections as Record<string, z.ZodMiniType>)[key] = built;
    shape[key] = built;
  }
  return z.object(shape) as unknown as z.ZodMiniObject<ConfigShape>;
}

export type Config = z.output<z.ZodMiniObject<ConfigShape>>;
export type SandboxConfig = z.output<ReturnType<typeof sandboxSchema>>;
export type ProviderConfig = z.output<ReturnType<typeof providerSchema>>;
export type ProviderEntry = z.output<ReturnType<typeof providerEntrySchema>>;
export type ModelConfig = z.output<ReturnType<typeof modelSchema>>;
