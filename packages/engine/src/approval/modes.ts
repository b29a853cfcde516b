/** The approval modes (§6.4), in a module of their own: flags are parsed before the engine loads (issue 22). */
export type ApprovalMode = 'default' | 'edit' | 'review' | 'audit' | 'full';
/** The `/approval` cycle order (§6.4): Default → Edit → Review → Audit → Full. */
export const APPROVAL_MODES: readonly ApprovalMode[] = ['default', 'edit', 'review', 'audit', 'full'];

/** A mode name as config and flags spell it; legacy `autoedit` is edit, `fullreview`/`full-review` are audit (§2.2). */
export function parseApprovalMode(value: string): ApprovalMode | undefined {
  const v = value.trim().toLowerCase();
  if (v === 'autoedit') return 'edit';
  if (v === 'fullreview' || v === 'full-review') return 'audit';
  return (APPROVAL_MODES as readonly string[]).includes(v) ? (v as ApprovalMode) : undefined;
}
