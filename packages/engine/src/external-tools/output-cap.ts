/**
 * Tool output text is capped at 100,000 characters, then `\n[truncated to 100000 characters]`;
 * line separators are always `\n` (§5.2). The same rule as the built-in tools' output cap.
 */
export const TOOL_OUTPUT_MAX_CHARS = 100_000;

export function capToolOutput(text: string, max = TOOL_OUTPUT_MAX_CHARS): string {
  const normalized = text.includes('\r\n') ? text.replace(/\r\n/g, '\n') : text;
  if (normalized.length <= max) return normalized;
  // Never split a surrogate pair.
  const last = normalized.charCodeAt(max - 1);
  const cut = last >= 0xd800 && last <= 0xdbff ? max - 1 : max;
  return `${normalized.slice(0, cut)}\n[truncated to ${max} characters]`;
}
