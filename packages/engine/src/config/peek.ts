/**
 * What the terminal's first frame needs from `config.json` before the engine loads (issue 22):
 * the provider and model the status shows, the approval mode, the view and whether the trust
 * question comes first. It is a peek, not the load: `loadConfig` still validates the whole
 * file once the engine is up, and any error is reported from there exactly as before. The peek
 * answers undefined whenever it cannot be sure (no file, unreadable, not valid JSON, a corrupt
 * trusted.json): the caller then loads the engine first, as it always did.
 */
import { readFileSync } from 'node:fs';
import { type ApprovalMode, parseApprovalMode } from '../approval/modes.js';
import { chosenModel, chosenProvider } from '../catalog.js';
import { homePaths } from '../home.js';
import { isTrusted } from '../trust.js';
import { parseJson } from './json-locate.js';

export interface StartPeek {
  /** `provider/model` as the session will show it, when flags or config name both. */
  readonly model: string | undefined;
  readonly approval: ApprovalMode;
  readonly terminalView: 'inline' | 'fullscreen' | undefined;
  /** The workspace is not trusted yet and `workspaceTrust` is not off: the question comes first. */
  readonly trustNeeded: boolean;
}

export interface PeekFlags {
  readonly provider?: string | undefined;
  readonly model?: string | undefined;
  readonly approval?: ApprovalMode | undefined;
}

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

export function peekStart(home: string, workspace: string, flags: PeekFlags): StartPeek | undefined {
  let raw: Record<string, unknown>;
  try {
    const parsed = parseJson(readFileSync(homePaths(home).config, 'utf8').replace(/^\uFEFF/, ''));
    if (!parsed.ok || parsed.value === null || typeof parsed.value !== 'object' || Array.isArray(parsed.value)) return undefined;
    raw = parsed.value as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const config = { provider: text(raw.provider), model: text(raw.model) };
  const model = chosenModel(config, flags);
  let trustNeeded: boolean;
  try {
    trustNeeded = raw.workspaceTrust !== false && !isTrusted(home, workspace);
  } catch {
    return undefined;
  }
  const view = raw.terminalView;
  return {
    model: model === undefined ? undefined : `${chosenProvider(config, flags)}/${model}`,
    approval: flags.approval ?? (typeof raw.approval === 'string' ? parseApprovalMode(raw.approval) : undefined) ?? 'default',
    terminalView: view === 'inline' || view === 'fullscreen' ? view : undefined,
    trustNeeded,
  };
}
