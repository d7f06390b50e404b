import { strict as assert } from 'node:assert';
import { paginate, paginateByPage, PagingError, syncQuery } from '../../../clients/typescript/src/paging.js';

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describe('the typed client: paging helpers (clients/typescript/src/paging.ts)', () => {
  it('follows nextCursor until a page says hasMore: false, fetching a page only when the previous one is consumed', async () => {
    const pages: Record<string, { items: number[]; hasMore: boolean; nextCursor?: string | null }> = {
      start: { items: [1, 2], hasMore: true, nextCursor: 'b' },
      b: { items: [], hasMore: true, nextCursor: 'c' },
      c: { items: [3], hasMore: false, nextCursor: 'd' },
    };
    const asked: (string | undefined)[] = [];
    const items = paginate(async (cursor) => {
      asked.push(cursor);
      return pages[cursor ?? 'start']!;
    });
    assert.deepEqual((await items.next()).value, 1);
    assert.deepEqual(asked, [undefined]);
    assert.deepEqual(await all(items), [2, 3]);
    // Caught up after 'c' (has_more false): its cursor 'd' is where a later run continues, not fetched now.
    assert.deepEqual(asked, [undefined, 'b', 'c']);
    assert.deepEqual(await all(paginate(async (cursor) => pages[cursor ?? 'start']!, 'c')), [3]);
  });

  it('throws a PagingError, after the first page, when a list says it has more but gives no cursor (offset mode)', async () => {
    // What the signals list answers without updatedSince or cursor: page 1, has_more, nextCursor null.
    const asked: (string | undefined)[] = [];
    const error = await all(
      paginate(async (cursor) => {
        asked.push(cursor);
        return { items: [1, 2], hasMore: true, nextCursor: null };
      }),
    ).then(
      () => assert.fail('paginate() returned a part of the list as if it were all'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof PagingError, String(error));
    assert.match(error.message, /offset mode.*updatedSince/);
    assert.deepEqual(asked, [undefined]);
  });

  it('stops with a PagingError when a list with more answers the cursor it was given', async () => {
    await assert.rejects(all(paginate(async () => ({ items: [1], hasMore: true, nextCursor: 'same' }), 'same')), PagingError);
  });

  it('syncQuery starts with updatedSince (the beginning unless told) and continues with the cursor', () => {
    assert.deepEqual(syncQuery(undefined), { updatedSince: '1970-01-01T00:00:00Z' });
    assert.deepEqual(syncQuery(undefined, '2026-11-01T00:00:00Z'), { updatedSince: '2026-11-01T00:00:00Z' });
    assert.deepEqual(syncQuery('c1'), { cursor: 'c1' });
  });

  it('reads offset lists (page, has_more) page by page', async () => {
    const seen: number[] = [];
    const items = paginateByPage(async (page) => {
      seen.push(page);
      return { items: [page * 10, page * 10 + 1], hasMore: page < 3 };
    });
    assert.deepEqual(await all(items), [10, 11, 20, 21, 30, 31]);
    assert.deepEqual(seen, [1, 2, 3]);
  });
});
