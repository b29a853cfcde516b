/** A read-only run of painted rows; lets long content hand out rows without copying them. */
export interface Rows {
  readonly count: number;
  row(i: number): string;
}

export const NO_ROWS: Rows = { count: 0, row: () => '' };

export function arrayRows(rows: readonly string[]): Rows {
  return { count: rows.length, row: (i) => rows[i] ?? '' };
}
