/**
 * Approval grants (APPR-2): Session grants live in memory; Always grants are kept in
 * `<home>/permissions.json` as `{ "grants": [ { "workspace", "tool", "fingerprint" } ] }`,
 * owner-only, deduplicated, written atomically. A corrupt file is an error naming the file and
 * is never overwritten.
 */
import { join, resolve } from 'node:path';
import type { ParsedToolCall } from '@crystal/core';
import * as z from 'zod/mini';
import { writeFileAtomic } from '../atomic-write.js';
import { keyLines, lineOfPath, parseJson } from '../config/json-locate.js';
import { ConfigError } from '../errors.js';
import { lazySchema } from '../lazy-schema.js';
import { readTextIfPresent } from '../fs-errors.js';

export interface Grant {
  /** The absolute workspace path. */
  readonly workspace: string;
  readonly tool: string;
  readonly fingerprint: string;
}

const PATH_FINGERPRINT_TOOLS = new Set(['write', 'edit', 'read', 'list', 'glob', 'grep', 'view_image', 'describe_image']);

/**
 * What a grant covers (§6.3): the `path` argument (with `\` as `/`) for path tools, the exact
 * command for `bash`, and the tool name for every other tool.
 */
export function fingerprintOf(call: ParsedToolCall): string {
  const input = call.input !== null && typeof call.input === 'object' ? (call.input as Record<string, unknown>) : {};
  if (PATH_FINGERPRINT_TOOLS.has(call.name)) return typeof input.path === 'string' ? input.path.replaceAll('\\', '/') : '';
  if (call.name === 'bash') return typeof input.command === 'string' ? input.command : '';
  // A host asked about by the sandbox's network proxy: the grant covers that host only.
  if (call.name === NETWORK_ASK_TOOL) return typeof input.host === 'string' ? input.host : '';
  return call.name;
}

/** The tool name of a network ask (no real tool can have a space in its name). */
export const NETWORK_ASK_TOOL = 'sandbox network';

export function grantFor(workspace: string, call: ParsedToolCall): Grant {
  return { workspace: resolve(workspace), tool: call.name, fingerprint: fingerprintOf(call) };
}

export function permissionsPath(home: string): string {
  return join(home, 'permissions.json');
}

/** Built at the first permissions.json read (issue 22 item 4: not when the engine loads). */
const fileSchema = lazySchema(() =>
  z.object({ grants: z.optional(z.array(z.object({ workspace: z.string(), tool: z.string(), fingerprint: z.string() }))) }),
);

interface PermissionsFile {
  /** Top-level keys other than `grants`, kept as they were when the file is rewritten. */
  readonly rest: Record<string, unknown>;
  readonly grants: Grant[];
}

/** Reads `permissions.json`; a missing or empty file holds no grants. Throws `ConfigError` when corrupt. */
export function readPermissions(home: string): PermissionsFile {
  const file = permissionsPath(home);
  let text: string | undefined;
  try {
    text = readTextIfPresent(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { rest: {}, grants: [] };
    throw new ConfigError(file, undefined, undefined, `cannot be read (${(error as Error).message}); fix its permissions.`);
  }
  if (text === undefined) return { rest: {}, grants: [] };
  text = text.replace(/^\uFEFF/, '');
  if (text.trim() === '') return { rest: {}, grants: [] };
  const parsed = parseJson(text);
  if (!parsed.ok) {
    throw new ConfigError(
      file,
      undefined,
      parsed.position.line,
      `is not valid JSON (${parsed.message}); fix or remove the file, it was left unchanged.`,
    );
  }
  if (parsed.value === null || typeof parsed.value !== 'object' || Array.isArray(parsed.value)) {
    throw new ConfigError(
      file,
      undefined,
      1,
      'expected a JSON object such as {"grants": []}; fix or remove the file, it was left unchanged.',
    );
  }
  const result = fileSchema().safeParse(parsed.value);
  if (!result.success) {
    const issue = result.error.issues[0];
    const path = (issue?.path ?? []).map((p) => (typeof p === 'symbol' ? String(p) : p));
    const message = (issue?.message ?? 'invalid value').replace(/^Invalid input: /, '');
    throw new ConfigError(
      file,
      path.join('.') || undefined,
      lineOfPath(keyLines(text), path),
      `${message}; each grant is {"workspace", "tool", "fingerprint"} strings. Fix or remove the file, it was left unchanged.`,
    );
  }
  const { grants: _grants, ...rest } = parsed.value as Record<string, unknown>;
  return { rest, grants: dedupe(result.data.grants ?? []) };
}

const keyOf = (grant: Grant): string => JSON.stringify([grant.workspace, grant.tool, grant.fingerprint]);

function dedupe(grants: readonly Grant[]): Grant[] {
  const seen = new Map<string, Grant>();
  for (const { workspace, tool, fingerprint } of grants) {
    const grant = { workspace, tool, fingerprint };
    if (!seen.has(keyOf(grant))) seen.set(keyOf(grant), grant);
  }
  return [...seen.values()];
}

/** Session grants in memory plus the persistent grants of one Home. */
export class GrantStore {
  private readonly session = new Set<string>();
  private readonly persistent = new Set<string>();
  /** Writes run one after another, so two Always answers never race on the file. */
  private writing: Promise<void> = Promise.resolve();

  /** Loads the persistent grants at once, so a corrupt `permissions.json` stops start-up with a clear error. */
  constructor(private readonly home: string) {
    for (const grant of readPermissions(home).grants) this.persistent.add(keyOf(grant));
  }

  get file(): string {
    return permissionsPath(this.home);
  }

  matches(grant: Grant): boolean {
    const key = keyOf(grant);
    return this.session.has(key) || this.persistent.has(key);
  }

  addSession(grant: Grant): void {
    this.session.add(keyOf(grant));
  }

  /**
   * Appends an Always grant to `permissions.json`: re-reads the file (another session may have
   * added grants), deduplicates and writes it atomically with mode 0600. The grant also holds for
   * this session even when the write fails; the error is thrown for the caller to report.
   */
  addPersistent(grant: Grant): Promise<void> {
    this.session.add(keyOf(grant));
    const write = async (): Promise<void> => {
      const current = readPermissions(this.home);
      const grants = dedupe([...current.grants, grant]);
      await writeFileAtomic(this.file, `${JSON.stringify({ ...current.rest, grants }, null, 2)}\n`, 0o600);
      this.persistent.add(keyOf(grant));
    };
    const next = this.writing.then(write);
    this.writing = next.catch(() => undefined);
    return next;
  }
}
