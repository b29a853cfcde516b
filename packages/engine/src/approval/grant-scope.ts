/**
 * TUIX-12: what a Session or Always grant covers, in words, from the same fingerprint the grant
 * store matches (grants.ts): the exact path for path tools, the exact command for `bash`, the
 * tool name for every other tool; always in this workspace only.
 */
import type { ParsedToolCall } from '@crystal/core';
import { escapeCardText } from './card.js';
import { fingerprintOf } from './grants.js';

const PATH_TOOLS = new Set(['write', 'edit', 'read', 'list', 'glob', 'grep', 'view_image', 'describe_image']);

export function grantScopeText(call: ParsedToolCall): string {
  const fingerprint = escapeCardText(fingerprintOf(call));
  const shown = fingerprint.length > 120 ? `${fingerprint.slice(0, 120)}…` : fingerprint;
  const tool = escapeCardText(call.name);
  let what: string;
  if (call.name === 'bash') what = `bash running exactly \`${shown}\``;
  else if (PATH_TOOLS.has(call.name)) what = `${tool} on ${shown || '.'} (that path only)`;
  else what = `every ${tool} call`;
  return `Session and Always allow ${what} in this workspace; Session until you quit, Always saved in permissions.json.`;
}
