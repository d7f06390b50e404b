import { sql, type CommonQueryMethods, type DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
import type { DomainEvent, DomainEventType } from '../../domain/events.js';
import { unreadRows } from '../pool.js';

/**
 * The outbox of the event seam (migration 0023). `recordEvent` takes a transaction: the event must
 * commit or roll back with the change it announces.
 */
export async function recordEvent(tx: DatabaseTransactionConnection, event: DomainEvent): Promise<void> {
  await recordEvents(tx, [event]);
}

/** The channel `recordEvents` notifies with an endpoint id when it created deliveries for it (src/webhooks/waker.ts listens). */
export const WEBHOOK_WAKE_CHANNEL = 'intake_webhook_deliveries';

/**
 * Several events in one statement: for changes made by one batched statement, from the rows it returned.
 * The same statement fans each event out to its organization's webhooks (issue 31): one delivery per
 * enabled endpoint whose event types match, committed (or rolled back) with the event, so that none
 * is lost or made twice (UNIQUE (endpoint_id, event_id)). The endpoints are then notified in the same
 * transaction (PostgreSQL delivers a NOTIFY at commit, once per distinct payload). An organization
 * without endpoints pays one index probe of webhook_endpoints.
 */
export async function recordEvents(tx: DatabaseTransactionConnection, events: readonly DomainEvent[]): Promise<void> {
  if (events.length === 0) return;
  await tx.query(sql.prepared('domain_events_record', unreadRows)`
    WITH recorded AS (
      INSERT INTO domain_events (organization_id, type, subject_id, payload)
      SELECT * FROM unnest(
        ${sql.array(
          events.map((e) => e.organizationId),
          'uuid',
        )}::uuid[],
        ${sql.array(
          events.map((e) => e.type),
          'text',
        )}::text[],
        ${sql.array(
          events.map((e) => e.subjectId),
          'uuid',
        )}::uuid[],
        ${sql.array(
          events.map((e) => JSON.stringify(e.payload)),
          'text',
        )}::jsonb[])
      RETURNING id, organization_id, type, subject_id
    ), fanned AS (
      INSERT INTO webhook_deliveries (id, endpoint_id, organization_id, event_id, event_type, subject_id, next_attempt_at)
      SELECT 'msg_' || replace(gen_random_uuid()::text, '-', ''), w.id, r.organization_id, r.id, r.type, r.subject_id, now()
      FROM recorded r
      JOIN webhook_endpoints w ON w.organization_id = r.organization_id AND w.enabled
        AND (w.event_types IS NULL OR r.type = ANY (w.event_types))
      ON CONFLICT (endpoint_id, event_id) DO NOTHING
      RETURNING endpoint_id
    )
    SELECT pg_notify(${WEBHOOK_WAKE_CHANNEL}, endpoint_id::text) FROM (SELECT DISTINCT endpoint_id FROM fanned) woken`);
}

export const domainEventRow = z.object({
  id: z.number(),
  organization_id: z.string(),
  type: z.string(),
  subject_id: z.string(),
  payload: z.record(z.string(), z.unknown()),
  recorded_at: z.string(),
});
export type DomainEventRow = z.infer<typeof domainEventRow>;

/** An organization's events after `afterId`, oldest first (tests now; webhook delivery next). */
export async function listEvents(
  db: CommonQueryMethods,
  organizationId: string,
  options: { afterId?: number; types?: readonly DomainEventType[]; limit?: number } = {},
): Promise<readonly DomainEventRow[]> {
  const types = options.types ? sql.fragment`AND type = ANY (${sql.array(options.types, 'text')})` : sql.fragment``;
  return db.any(sql.type(domainEventRow)`
    SELECT id, organization_id, type, subject_id, payload, recorded_at FROM domain_events
    WHERE organization_id = ${organizationId} AND id > ${options.afterId ?? 0} ${types}
    ORDER BY id LIMIT ${options.limit ?? 1000}`);
}

/** The retention sweep's share: events recorded before `before`, at most `limit` a call. */
export async function purgeEventsBefore(db: CommonQueryMethods, before: Date, limit: number): Promise<number> {
  const result = await db.query(sql.unsafe`
    DELETE FROM domain_events WHERE id IN (
      SELECT id FROM domain_events WHERE recorded_at < ${before.toISOString()} ORDER BY recorded_at LIMIT ${limit})`);
  return result.rowCount;
}

/** Deletes the events about these resources (their content goes with a deleted resource, issue 32). */
export async function forgetEventSubjects(tx: CommonQueryMethods, organizationId: string, subjectIds: readonly string[]): Promise<void> {
  if (!subjectIds.length) return;
  await tx.query(sql.unsafe`
    DELETE FROM domain_events WHERE organization_id = ${organizationId} AND subject_id = ANY(${sql.array([...subjectIds], 'uuid')})`);
}
