import {
  decodeCursor,
  encodeCursor,
  MAX_CURSOR_LENGTH,
  nextPosition,
  type SyncPosition,
  type SyncResource,
} from '../src/domain/sync-cursor.js';
import type { ChangePage, ChangeWindow } from '../src/db/repositories/sync-pages.js';
import { AppError, ValidationError } from '../src/errors.js';
import type { AppContext } from './context.js';
import { pageBody, pageSchema, type PageQuery } from './paging.js';
import type { JsonSchema } from './validation.js';

/**
 * Incremental sync on the signals, sessions and recordings lists (guide: docs/guides/incremental-sync.md,
 * decisions 0179 and 0180). Two modes, chosen by the query:
 * - offset mode (neither `cursor` nor `updatedSince`): the list as its contract defines it, `page`
 *   and `limit`, newest first; `nextCursor` is null;
 * - keyset mode (`updatedSince` to start, `cursor` to continue; never both, never with `page`):
 *   rows in the order of their latest change, `limit` per page, and always a `nextCursor` to
 *   continue from; `has_more: false` means caught up for now.
 */
export const syncQueryProperties = {
  cursor: {
    type: 'string',
    minLength: 1,
    maxLength: MAX_CURSOR_LENGTH,
    description: 'Continue an incremental sync: the `nextCursor` of the previous page, unchanged (keyset mode; not with `page`)',
  },
  updatedSince: {
    type: 'string',
    format: 'date-time',
    description:
      'Start an incremental sync with the rows changed at or after this instant, oldest change first (keyset mode; not with `page` or `cursor`). `1970-01-01T00:00:00Z` starts from the beginning',
  },
} as const satisfies Record<string, JsonSchema>;

/** The OpenAPI description of a list that syncs (both modes, in short; the guide has the rest). */
export const SYNC_LIST_DESCRIPTION = [
  'Two modes. **Offset paging** (default): `page` and `limit`, in the order the summary gives; `nextCursor` is null.',
  '**Incremental sync** (keyset): start with `updatedSince` (an instant; `1970-01-01T00:00:00Z` for everything), then send each',
  "response's `nextCursor` as `cursor` with the same filters. Rows come in the order of their latest change (an update moves a row",
  'to the end), `limit` per page; `has_more: false` means caught up: keep `nextCursor` and ask again later. A client that follows',
  'cursors sees every change at least once (the latest version of each row) and misses none; rows of transactions still open are',
  'served on a later call. Deleted rows are not reported. `cursor` or `updatedSince` with `page`, or together, is a 400',
  '`validation_failed`; a cursor this list did not return is a 400 `invalid_cursor`. Guide: docs/guides/incremental-sync.md.',
].join(' ');

/**
 * A list page of `item`s under `key` with the cursor of keyset mode (closed). `nextCursor` is
 * always sent, but not `required`: the lists' contract (and typed clients built on it) predates it.
 */
export function syncPageSchema<const K extends string, const I extends JsonSchema>(key: K, item: I) {
  const base = pageSchema(key, item);
  return {
    ...base,
    properties: {
      ...base.properties,
      nextCursor: {
        type: ['string', 'null'],
        description:
          'Keyset mode: where the next request continues (always a string, also when caught up: keep it and ask again later). Offset mode: null',
      },
    },
  } as const;
}

/** A keyset request: where it starts. */
export interface SyncRequest {
  after: SyncPosition | null;
  since: string | null;
}

/** Null for offset mode; the keyset request otherwise (400 for a bad combination or cursor). */
export function syncRequest(
  ctx: AppContext,
  resource: SyncResource,
  query: { cursor?: string | undefined; updatedSince?: string | undefined },
): SyncRequest | null {
  if (query.cursor === undefined && query.updatedSince === undefined) return null;
  // `page` has a default: whether the client sent it is in the raw query string only.
  if (new URLSearchParams(ctx.querystring).has('page')) {
    throw new ValidationError(
      [{ path: 'query.page', message: 'must not be combined with cursor or updatedSince' }],
      'page is offset paging; cursor and updatedSince are incremental sync: use one or the other.',
    );
  }
  if (query.cursor !== undefined && query.updatedSince !== undefined) {
    throw new ValidationError(
      [{ path: 'query.updatedSince', message: 'must not be combined with cursor' }],
      'updatedSince starts an incremental sync and cursor continues one: send one of them.',
    );
  }
  if (query.cursor === undefined) return { after: null, since: new Date(query.updatedSince as string).toISOString() };
  const after = decodeCursor(resource, query.cursor);
  if (!after) throw new AppError('invalid_cursor');
  return { after, since: null };
}

export function changeWindow(request: SyncRequest, limit: number): ChangeWindow {
  return { after: request.after, since: request.since, limit: limit + 1 };
}

/** A keyset page body: the page's rows in change order, `has_more`, and the cursor to continue from. */
export function changeBody<T>(
  key: string,
  resource: SyncResource,
  request: SyncRequest,
  limit: number,
  page: ChangePage<T>,
  present: (row: T) => unknown,
) {
  const served = page.rows.slice(0, limit);
  const hasMore = page.rows.length > limit;
  const next = nextPosition({ after: request.after, hasMore, last: served.at(-1)?.position ?? null, horizon: page.horizon });
  return {
    [key]: served.map((r) => present(r.row)),
    page: 1,
    limit,
    has_more: hasMore,
    nextCursor: encodeCursor(resource, next),
  };
}

/** An offset page body of a list that also syncs: `nextCursor` is null. */
export function offsetBody<T>(key: string, rows: readonly T[], query: PageQuery, present: (row: T) => unknown) {
  return { ...pageBody(key, rows, query, present), nextCursor: null };
}
