/** Offset and limit paging shared by list and glob: `[showing N of M entries; continue with offset K]`. */

export const PAGE_MAX = 1000;

export interface Page<T> {
  readonly items: T[];
  readonly total: number;
}

/** Keeps one page and counts the rest, so memory holds a page, not the whole listing. */
export async function pageOf<T>(source: AsyncIterable<T>, offset: number, limit: number): Promise<Page<T>> {
  const items: T[] = [];
  let total = 0;
  for await (const item of source) {
    if (total >= offset && items.length < limit) items.push(item);
    total++;
  }
  return { items, total };
}

/** As `pageOf`, over a source of batches. */
export async function pageOfBatches<T>(source: AsyncIterable<readonly T[]>, offset: number, limit: number): Promise<Page<T>> {
  const items: T[] = [];
  let total = 0;
  for await (const batch of source) {
    for (const item of batch) {
      if (total >= offset && items.length < limit) items.push(item);
      total++;
    }
  }
  return { items, total };
}

export function pagingNote(shown: number, total: number, offset: number, noun: string): string {
  if (offset + shown >= total) return '';
  return `\n[showing ${shown} of ${total} ${noun}; continue with offset ${offset + shown}]`;
}
