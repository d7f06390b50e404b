import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { isUuid } from '../uuid.js';
import { visibleTo, type Reader } from './agent-conversations.js';
import { changeColumns, changeConditions, changeOrder, changePage, type ChangePage, type ChangeWindow } from './sync-pages.js';

export const signalRow = z.object({
  id: z.string(),
  session_id: z.string(),
  application_id: z.string(),
  event_external_id: z.string(),
  source: z.enum(['explicit_feedback', 'qualitative_inference']),
  kind: z.string().nullable(),
  rating: z.enum(['positive', 'negative']).nullable(),
  labels: z.array(z.string()),
  comment: z.string().nullable(),
  summary: z.string().nullable(),
  producer: z.string().nullable(),
  created_at: z.string(),
});
export type SignalRow = z.infer<typeof signalRow>;

export interface SignalFilter {
  source?: string | undefined;
  rating?: string | undefined;
  sessionId?: string | undefined;
  applicationId?: string | undefined;
  /** Found at or after this instant (ISO 8601). */
  createdFrom?: string | undefined;
  /** Found before this instant (ISO 8601). */
  createdTo?: string | undefined;
  offset: number;
  limit: number;
}

/** The list's filters, and the conversations the reader may see (conversation access applies to signals too). */
function signalFilters(reader: Reader, f: Omit<SignalFilter, 'offset' | 'limit'>) {
  const filters = [
    f.source ? sql.fragment`g.source = ${f.source}` : null,
    f.rating ? sql.fragment`g.rating = ${f.rating}` : null,
    f.sessionId ? sql.fragment`g.session_id = ${f.sessionId}` : null,
    f.applicationId ? sql.fragment`s.application_id = ${f.applicationId}` : null,
    f.createdFrom ? sql.fragment`g.created_at >= ${f.createdFrom}::timestamptz` : null,
    f.createdTo ? sql.fragment`g.created_at < ${f.createdTo}::timestamptz` : null,
  ].filter((x) => x !== null);
  const extra = filters.length ? sql.fragment`AND ${sql.join(filters, sql.fragment` AND `)}` : sql.fragment``;
  return sql.fragment`g.organization_id = ${reader.organizationId} AND ${visibleTo(reader)} ${extra}`;
}

const signalColumns = sql.fragment`g.id, g.session_id, s.application_id, g.event_external_id, g.source, g.kind, g.rating, g.labels,
  g.comment, g.summary, g.producer, g.created_at`;

/** Newest first, by offset. */
export async function listSignals(db: CommonQueryMethods, reader: Reader, f: SignalFilter): Promise<readonly SignalRow[]> {
  return db.any(sql.type(signalRow)`
    SELECT ${signalColumns}
    FROM agent_signals g JOIN agent_sessions s ON s.id = g.session_id
    WHERE ${signalFilters(reader, f)}
    ORDER BY g.created_at DESC, g.id LIMIT ${f.limit} OFFSET ${f.offset}`);
}

/** One signal as the list shows it to the reader (null when deleted or not visible): a webhook's `data.signal`. */
export async function findSignal(db: CommonQueryMethods, reader: Reader, signalId: string): Promise<SignalRow | null> {
  return (await findSignals(db, reader, [signalId]))[0] ?? null;
}

/**
 * Several signals by id (unknown, invalid or invisible ids are left out). The signals are found by
 * primary key first (a materialized CTE), then their sessions: left to itself, the planner misjudged
 * the visibility filter's anti-join (4 of 1,000 sessions) and scanned every session's signals through
 * the session index, 50-160 ms for about 134 ids in the webhook benchmark (auto_explain), where the key
 * finds them in about a millisecond.
 */
export async function findSignals(db: CommonQueryMethods, reader: Reader, signalIds: readonly string[]): Promise<readonly SignalRow[]> {
  const ids = signalIds.filter(isUuid);
  if (ids.length === 0) return [];
  return db.any(sql.type(signalRow)`
    WITH g AS MATERIALIZED (
      SELECT * FROM agent_signals WHERE id = ANY(${sql.array(ids, 'uuid')}) AND organization_id = ${reader.organizationId})
    SELECT ${signalColumns}
    FROM g JOIN agent_sessions s ON s.id = g.session_id
    WHERE ${signalFilters(reader, {})}`);
}

/** The signals changed after a position, oldest change first (incremental sync, migration 0026). */
export async function signalChanges(
  db: CommonQueryMethods,
  reader: Reader,
  f: Omit<SignalFilter, 'offset' | 'limit'>,
  w: ChangeWindow,
): Promise<ChangePage<SignalRow>> {
  const g = sql.identifier(['g']);
  return changePage(
    db,
    signalRow,
    sql.fragment`
      SELECT ${changeColumns(g)}, ${signalColumns}
      FROM agent_signals g JOIN agent_sessions s ON s.id = g.session_id
      WHERE ${signalFilters(reader, f)} AND ${changeConditions(g, w)}
      ${changeOrder(g, w)}`,
  );
}

const dayRow = z.object({ date: z.string(), quantity: z.number() });

/** Metered units of the organization in [from, to), per UTC day. */
export async function usageByDay(
  db: CommonQueryMethods,
  q: { organizationId: string; unit: string; from: string; to: string; applicationId?: string | undefined; sessionId?: string | undefined },
): Promise<readonly z.infer<typeof dayRow>[]> {
  const app = q.applicationId ? sql.fragment`AND application_id = ${q.applicationId}` : sql.fragment``;
  const session = q.sessionId ? sql.fragment`AND session_id = ${q.sessionId}` : sql.fragment``;
  return db.any(sql.type(dayRow)`
    SELECT to_char(date_trunc('day', recorded_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS date, sum(quantity)::int AS quantity
    FROM usage_records
    WHERE organization_id = ${q.organizationId} AND unit = ${q.unit}
      AND recorded_at >= ${q.from}::timestamptz AND recorded_at < ${q.to}::timestamptz ${app} ${session}
    GROUP BY 1 ORDER BY 1`);
}

/** The ids of these sessions' signals (what their deletion takes with it). */
export async function sessionSignalIds(db: CommonQueryMethods, sessionIds: readonly string[]): Promise<readonly string[]> {
  if (!sessionIds.length) return [];
  return db.anyFirst(sql.type(z.object({ id: z.string() }))`
    SELECT id FROM agent_signals WHERE session_id = ANY(${sql.array([...sessionIds], 'uuid')})`);
}
