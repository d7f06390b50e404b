/**
 * One page of a list: its items, whether the list has more (`has_more`), and the cursor of the next
 * page. `hasMore` is required: a list in offset mode (`page`, `limit`) answers `has_more: true` with
 * no `nextCursor`, and a helper that looked at the cursor alone would stop after the first page.
 */
export interface CursorPage<T> {
  items: readonly T[];
  /** The list's `has_more`: false once the list is caught up (the last page, for now). */
  hasMore: boolean;
  /** Where the next page starts; absent or null where the list has no cursor (offset mode). */
  nextCursor?: string | null | undefined;
}

/** What paginate() throws instead of returning part of a list as if it were all of it. */
export class PagingError extends Error {
  override readonly name = 'PagingError';
}

/** Where an incremental sync starts: everything, unless `updatedSince` says from when. */
export const SYNC_FROM_THE_BEGINNING = '1970-01-01T00:00:00Z';

/**
 * The cursor query of a sync list's page: the stored cursor to continue, or `updatedSince` to start
 * (keyset mode, docs/guides/incremental-sync.md). Without either, the signals, sessions and
 * recordings lists answer in offset mode, which has no cursor to follow.
 */
export function syncQuery(
  cursor: string | undefined,
  updatedSince: string = SYNC_FROM_THE_BEGINNING,
): { cursor: string } | { updatedSince: string } {
  return cursor === undefined ? { updatedSince } : { cursor };
}

/**
 * Every item of a cursor-paged list, page by page, fetched as they are consumed:
 * `for await (const s of paginate((cursor) => …fetch a page from cursor…)) …`. The first call gets
 * `from` (undefined: start from the beginning; a `nextCursor` the caller stored: continue there).
 * It stops after a page with `hasMore: false`. A page that says there is more but gives no cursor,
 * or gives back the cursor it was asked for, is a PagingError: the rest of the list would be lost or
 * read forever.
 */
export async function* paginate<T>(fetchPage: (cursor: string | undefined) => Promise<CursorPage<T>>, from?: string): AsyncGenerator<T> {
  let cursor = from;
  for (;;) {
    const page = await fetchPage(cursor);
    yield* page.items;
    if (!page.hasMore) return;
    if (!page.nextCursor)
      throw new PagingError(
        'The list has more items but answered no nextCursor: it is in offset mode. Start a sync list with updatedSince (syncQuery), or read an offset list with paginateByPage',
      );
    if (page.nextCursor === cursor) throw new PagingError('The list answered the same cursor again: stopping instead of looping');
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
    return { items, hasMore, nextCursor: hasMore ? String(page + 1) : null };
  });
}
