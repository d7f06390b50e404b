import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import type { TestApi } from '../../../harness/app.js';

export const BEGINNING = '1970-01-01T00:00:00Z';

export interface SyncList {
  /** e.g. '/v3/rest/signals' */
  path: string;
  /** The body's array. */
  key: 'signals' | 'sessions' | 'recordings';
  /** An item's id field. */
  id: 'id' | 'sessionId';
}

export const SIGNALS: SyncList = { path: '/v3/rest/signals', key: 'signals', id: 'id' };
export const SESSIONS: SyncList = { path: '/v3/rest/agent-conversations/sessions', key: 'sessions', id: 'sessionId' };
export const RECORDINGS: SyncList = { path: '/v3/rest/recordings', key: 'recordings', id: 'id' };

export interface SyncPage {
  status: number;
  items: Record<string, unknown>[];
  hasMore: boolean;
  nextCursor: string;
  body: Record<string, unknown>;
}

/** One keyset request: `start` is a cursor, or `{ updatedSince }`. */
export async function syncPage(
  api: TestApi,
  apiKey: string,
  list: SyncList,
  start: string | { updatedSince: string },
  o: { limit?: number; extra?: string } = {},
): Promise<SyncPage> {
  const q = new URLSearchParams(typeof start === 'string' ? { cursor: start } : { updatedSince: start.updatedSince });
  if (o.limit) q.set('limit', String(o.limit));
  const res = await api.request(`${list.path}?${q.toString()}${o.extra ? `&${o.extra}` : ''}`, {
    headers: { 'X-Service-Api-Key': apiKey },
  });
  const body = res.body as Record<string, unknown>;
  return {
    status: res.status,
    items: (body[list.key] ?? []) as Record<string, unknown>[],
    hasMore: body.has_more === true,
    nextCursor: body.nextCursor as string,
    body,
  };
}

/** Follows cursors from `start` until caught up (has_more false): every item in order, and the cursor to resume from. */
export async function syncAll(
  api: TestApi,
  apiKey: string,
  list: SyncList,
  start: string | { updatedSince: string },
  o: { limit?: number; extra?: string } = {},
): Promise<{ items: Record<string, unknown>[]; cursor: string; pages: number }> {
  const items: Record<string, unknown>[] = [];
  let page = await syncPage(api, apiKey, list, start, o);
  let pages = 1;
  for (;;) {
    if (page.status !== 200) throw new Error(`sync page: ${page.status} ${JSON.stringify(page.body)}`);
    items.push(...page.items);
    if (!page.hasMore) return { items, cursor: page.nextCursor, pages };
    page = await syncPage(api, apiKey, list, page.nextCursor, o);
    pages++;
  }
}

/** A signal row written directly (the processing activities' insert needs a whole workflow run). */
export async function insertSignal(pool: DatabasePool, organizationId: string, sessionId: string, summary: string): Promise<string> {
  return pool.oneFirst(sql.type(z.object({ id: z.string() }))`
    INSERT INTO agent_signals (organization_id, session_id, event_external_id, source, kind, summary)
    VALUES (${organizationId}, ${sessionId}, 'e1', 'qualitative_inference', 'topic', ${summary}) RETURNING id`);
}
