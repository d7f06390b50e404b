import type { JsonSchema, Validated } from './validation.js';

/** Page-numbered lists (the spec's recordings list shape): `page` from 1, `limit` 1 to 100 (default 50). */

export const pageProperties = {
  page: { type: 'integer', minimum: 1, maximum: 1_000_000, default: 1 },
  limit: { type: 'integer', minimum: 1, maximum: 100, default: 50 },
} as const;
export const pageQuery = { type: 'object', additionalProperties: false, properties: pageProperties } as const satisfies JsonSchema;
export type PageQuery = Validated<typeof pageQuery>;

/** The schema of a page of `item`s under `key` (what `pageBody` returns), closed. */
export function pageSchema<const K extends string, const I extends JsonSchema>(key: K, item: I) {
  return {
    type: 'object',
    additionalProperties: false,
    required: [key, 'page', 'limit', 'has_more'],
    properties: {
      ...({ [key]: { type: 'array', items: item } } as { [P in K]: { readonly type: 'array'; readonly items: I } }),
      page: { type: 'integer', minimum: 1 },
      limit: { type: 'integer', minimum: 1 },
      has_more: { type: 'boolean' },
    },
  } as const;
}

/** Fetch one more row than asked: its presence is `has_more`. */
export function pageWindow(query: PageQuery) {
  return { offset: (query.page - 1) * query.limit, limit: query.limit + 1 };
}

/** A list body: `{<key>: [...], page, limit, has_more}` from the rows `pageWindow()` fetched. */
export function pageBody<T>(key: string, rows: readonly T[], query: PageQuery, present: (row: T) => unknown) {
  return { [key]: rows.slice(0, query.limit).map(present), page: query.page, limit: query.limit, has_more: rows.length > query.limit };
}
