/**
 * Which model reviews (REV-2, reference §6.4, §2.2): the session model, unless
 * `approvalModel.enabled` is true; then a separate client with its own provider, credentials and
 * stored gear (a gear the model does not take falls back to the provider default), and never
 * the session model, even when the approval model cannot be reached.
 * `/approval model [on|off|<model>|<provider> <model>]` and `/approval thinking [gear]` change it
 * and persist `approvalModel` in config.json; the launch flags shape the process only.
 */
import type { StreamingChatClient, ThinkingEffort } from '@crystal/core';
import { createChatClient } from '@crystal/providers';
import { catalogOf, selectModel } from '../../catalog.js';
import type { Config } from '../../config/schema.js';
import { resolveApiKey } from '../../credentials.js';
import { UsageError } from '../../errors.js';
import { editConfig, resolveModelArgument } from '../../preferences.js';
import { clientOptionsOf } from '../../transport-options.js';

export interface ApprovalModelSettings {
  readonly enabled: boolean;
  readonly provider?: string | undefined;
  readonly model?: string | undefined;
  readonly thinkingEffort?: ThinkingEffort | undefined;
}

/** Launch flags (§1.2): `--approval-model on|off`, `--approval-provider`, `--approval-model-id`, `--approval-thinking`. */
export interface ApprovalModelFlags {
  readonly enabled?: boolean | undefined;
  readonly provider?: string | undefined;
  readonly model?: string | undefined;
  readonly thinking?: ThinkingEffort | undefined;
}

/** Config plus launch flags; a provider or model id turns the switch on, and `off` with one is an error. */
export function approvalModelSettings(config: Config, flags: ApprovalModelFlags = {}): ApprovalModelSettings {
  const stored = config.approvalModel;
  const named = flags.provider !== undefined || flags.model !== undefined;
  if (flags.enabled === false && named) {
    throw new UsageError('--approval-model off cannot be combined with --approval-provider or --approval-model-id.');
  }
  const provider = flags.provider ?? stored?.provider;
  const model = flags.model ?? stored?.model;
  const thinkingEffort = flags.thinking ?? stored?.thinkingEffort;
  return {
    // Set (with a provider and model) means on unless `enabled: false` says otherwise (§2.2).
    enabled: named ? true : (flags.enabled ?? stored?.enabled ?? (stored?.provider !== undefined && stored.model !== undefined)),
    ...(provider !== undefined ? { provider } : {}),
    ...(model !== undefined ? { model } : {}),
    ...(thinkingEffort !== undefined ? { thinkingEffort } : {}),
  };
}

export interface ReviewerClientSource {
  readonly home: string;
  readonly config: Config;
  readonly env: NodeJS.ProcessEnv;
  /** The session's client and gear (used only while the switch is off). */
  readonly sessionClient: () => StreamingChatClient;
  readonly sessionThinking: () => ThinkingEffort | undefined;
}

export class ApprovalModel {
  private cached: { key: string; client: StreamingChatClient; efforts?: readonly ThinkingEffort[]; thinks: boolean } | undefined;

  constructor(
    private settings: ApprovalModelSettings,
    private readonly source: ReviewerClientSource,
  ) {}

  get current(): ApprovalModelSettings {
    return this.settings;
  }

  /** The reviewer's client: the approval model's when on (its errors name config.json), else the session's. */
  async client(): Promise<StreamingChatClient> {
    if (!this.settings.enabled) return this.source.sessionClient();
    const { provider, model } = this.settings;
    if (provider === undefined || model === undefined) {
      throw new UsageError(
        'approvalModel is on but names no model; set approvalModel.provider and approvalModel.model in config.json or use /approval model <provider> <model>.',
      );
    }
    const key = `${provider}\u0000${model}`;
    if (this.cached?.key === key) return this.cached.client;
    let selection: ReturnType<typeof selectModel>;
    try {
      selection = selectModel(this.source.config, { provider, model });
    } catch (error) {
      throw new UsageError(`approvalModel: ${(error as Error).message}`);
    }
    const apiKey = resolveApiKey(this.source.home, selection.providerName, selection.provider, this.source.env);
    const client = await createChatClient(
      {
        name: selection.providerName,
        protocol: selection.provider.protocol,
        baseUri: selection.provider.baseUri,
        ...(apiKey ? { apiKey } : {}),
      },
      selection.model,
      clientOptionsOf(this.source.home, this.source.config, this.source.env),
    );
    this.cached = {
      key,
      client,
      thinks: selection.model.thinking === true,
      ...(selection.model.thinkingEfforts ? { efforts: selection.model.thinkingEfforts as ThinkingEffort[] } : {}),
    };
    return client;
  }

  /** The gear to send: the stored one when on (dropped when the model does not take it), else the session's. */
  thinking(): ThinkingEffort | undefined {
    if (!this.settings.enabled) return this.source.sessionThinking();
    const gear = this.settings.thinkingEffort;
    if (gear === undefined || gear === 'default') return undefined;
    const model = this.cached;
    if (!model) return undefined;
    if (!model.thinks && gear !== 'off') return undefined;
    if (model.efforts && !model.efforts.includes(gear)) return undefined;
    return gear;
  }

  /** `/approval model [on|off|<model>|<provider> <model>]`: the line to show; persists `approvalModel`. */
  async command(argument: string): Promise<string> {
    const arg = argument.trim();
    if (arg === '') return this.describe();
    if (arg === 'on') {
      if (this.settings.provider === undefined || this.settings.model === undefined) {
        throw new UsageError('No approval model is stored yet; name one: /approval model <provider> <model>.');
      }
      this.settings = { ...this.settings, enabled: true };
    } else if (arg === 'off') {
      this.settings = { ...this.settings, enabled: false };
    } else {
      const catalog = catalogOf(this.source.config);
      const { provider, model } = resolveModelArgument(
        arg,
        catalog,
        this.settings.provider ?? this.source.sessionClient().provider,
      );
      this.settings = { ...this.settings, enabled: true, provider, model };
    }
    await this.persist();
    return this.describe();
  }

  /** `/approval thinking [gear]`: needs a stored approval model; works while the switch is off. */
  async thinkingCommand(argument: string, gears: readonly ThinkingEffort[]): Promise<string> {
    if (this.settings.provider === undefined || this.settings.model === undefined) {
      throw new UsageError(
        '/approval thinking needs a stored approval model; set one first: /approval model <provider> <model>.',
      );
    }
    const arg = argument.trim();
    const aliases: Record<string, ThinkingEffort> = { none: 'off', max: 'maximum' };
    const current = this.settings.thinkingEffort ?? 'default';
    const next =
      arg === ''
        ? (gears[(gears.indexOf(current) + 1) % gears.length] as ThinkingEffort)
        : (aliases[arg] ?? (arg as ThinkingEffort));
    if (!gears.includes(next)) throw new UsageError(`Thinking gears: ${gears.join(', ')}.`);
    this.settings = { ...this.settings, thinkingEffort: next };
    await this.persist();
    return `Approval thinking: ${next}.`;
  }

  describe(): string {
    const { enabled, provider, model } = this.settings;
    if (!enabled) {
      return provider && model
        ? `Approval model: off (stored ${provider}/${model}); the session model reviews.`
        : 'Approval model: off; the session model reviews.';
    }
    const gear = this.settings.thinkingEffort ? `, thinking ${this.settings.thinkingEffort}` : '';
    return `Approval model: ${provider}/${model}${gear}.`;
  }

  private async persist(): Promise<void> {
    const { enabled, provider, model, thinkingEffort } = this.settings;
    await editConfig(this.source.home, [
      {
        path: ['approvalModel'],
        value: {
          enabled,
          ...(provider ? { provider } : {}),
          ...(model ? { model } : {}),
          ...(thinkingEffort ? { thinkingEffort } : {}),
        },
      },
    ]);
  }
}
