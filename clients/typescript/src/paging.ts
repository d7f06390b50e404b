/** One page of a list: its items, and the cursor of the next page (absent or null on the last). */
export interface CursorPage<T> {
  items: readonly T[];
  nextCursor?: string | null | undefined;
}

/**
 * Every item of a cursor-paged list, page by page, fetched as they are consumed:
 * `for await (const s of paginate((cursor) => …fetch a page from cursor…)) …`. The first call gets
 * `undefined` (start from the beginning, or from a cursor the caller stored: pass `from`).
 */
export async function* paginate<T>(fetchPage: (cursor: string | undefined) => Promise<CursorPage<T>>, from?: string): AsyncGenerator<T> {
  let cursor = from;
  for (;;) {
    const page = await fetchPage(cursor);
    yield* page.items;
    if (!page.nextCursor) return;
    if (page.nextCursor === cursor) throw new Error('The list answered the same cursor again: stopping instead of looping');
    cursor = page.nextCursor;
  }
}

/** Offset-paged lists (`page`, `limit`, `has_more`) through the same iterator: the cursor is the page number. */
export function paginateByPage<T>(
  fetchPage: (page: number) => Promise<{ items: readonly T[]; hasMore: boolean }>,
  firstPage = 1,
): AsyncGenerator<T> {
  return paginate(async (cursor) => {
    const page = cursor === undefined ? firstPage : Number(cursor);
    const { items, hasMore } = await fetchPage(page);
    return { items, nextCursor: hasMore ? String(page + 1) : null };
  });
}
