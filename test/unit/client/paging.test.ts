import { strict as assert } from 'node:assert';
import { paginate, paginateByPage } from '../../../clients/typescript/src/paging.js';

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describe('the typed client: paging helpers (clients/typescript/src/paging.ts)', () => {
  it('follows nextCursor until it is absent, fetching a page only when the previous one is consumed', async () => {
    const pages: Record<string, { items: number[]; nextCursor?: string | null }> = {
      start: { items: [1, 2], nextCursor: 'b' },
      b: { items: [], nextCursor: 'c' },
      c: { items: [3], nextCursor: null },
    };
    const asked: (string | undefined)[] = [];
    const items = paginate(async (cursor) => {
      asked.push(cursor);
      return pages[cursor ?? 'start']!;
    });
    assert.deepEqual((await items.next()).value, 1);
    assert.deepEqual(asked, [undefined]);
    assert.deepEqual(await all(items), [2, 3]);
    assert.deepEqual(asked, [undefined, 'b', 'c']);
    assert.deepEqual(await all(paginate(async (cursor) => pages[cursor ?? 'start']!, 'c')), [3]);
  });

  it('stops with an error when a list answers the cursor it was given', async () => {
    await assert.rejects(all(paginate(async () => ({ items: [1], nextCursor: 'same' }))), /same cursor again/);
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
