import { sql, type CommonQueryMethods, type DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
import type { DomainEvent, DomainEventType } from '../../domain/events.js';

/**
 * The outbox of the event seam (migration 0023). `recordEvent` takes a transaction: the event must
 * commit or roll back with the change it announces.
 */
export async function recordEvent(tx: DatabaseTransactionConnection, event: DomainEvent): Promise<void> {
  await recordEvents(tx, [event]);
}

/** Several events in one statement: for changes made by one batched statement, from the rows it returned. */
export async function recordEvents(tx: DatabaseTransactionConnection, events: readonly DomainEvent[]): Promise<void> {
  if (events.length === 0) return;
  await tx.query(sql.unsafe`
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
      )}::jsonb[])`);
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
