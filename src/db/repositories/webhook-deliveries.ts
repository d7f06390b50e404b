import { sql, type CommonQueryMethods, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { isUuid } from '../uuid.js';
import { forgetEventSubjects, WEBHOOK_WAKE_CHANNEL } from './domain-events.js';

/**
 * The webhook delivery engine's SQL (issue 31): deliveries and their attempts, and the engine's
 * share of webhook_endpoints (reading an endpoint's URL and sealed secrets; its health columns:
 * failing_since, and disabling after 5 days of failures). Deliveries are created by
 * recordEvents (src/db/repositories/domain-events.ts) in the transaction of each event.
 */

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

const endpointTarget = z.object({
  id: z.string(),
  organization_id: z.string(),
  url: z.string(),
  enabled: z.boolean(),
  secret_sealed: z.string(),
  previous_secret_sealed: z.string().nullable(),
  previous_secret_expires_at: z.string().nullable(),
});
export type EndpointTarget = z.infer<typeof endpointTarget>;

/** What the sender needs of an endpoint, or null when it was deleted. */
export async function findEndpointTarget(db: CommonQueryMethods, endpointId: string): Promise<EndpointTarget | null> {
  return db.maybeOne(sql.type(endpointTarget)`
    SELECT id, organization_id, url, enabled, secret_sealed, previous_secret_sealed, previous_secret_expires_at
    FROM webhook_endpoints WHERE id = ${endpointId}`);
}

const dueDelivery = z.object({
  id: z.string(),
  event_id: z.number().nullable(),
  event_type: z.string(),
  subject_id: z.string().nullable(),
  body: z.string().nullable(),
  attempts: z.number(),
});
export type DueDelivery = z.infer<typeof dueDelivery>;

/**
 * An endpoint's deliveries due at `now`, oldest event first, except those waiting for an earlier
 * pending delivery of the same subject (events of one resource are delivered in event order): of
 * a subject's pending deliveries only the first may go. The first of each subject is found once
 * (DISTINCT ON over the pending-subject index, hashed), not probed per delivery: a probe per row
 * took seconds over a few thousand pending rows whenever the table's statistics were stale.
 * `notAttemptedSince`: leaves out deliveries attempted since then (the sender's call does not retry
 * what failed in it, whatever the retry delay). `except`: leaves out these deliveries (the call's
 * own, in flight or their attempts not yet recorded); a subject whose first pending delivery is
 * among them has none due.
 */
export async function dueDeliveries(
  db: CommonQueryMethods,
  endpointId: string,
  o: { now: Date; limit: number; notAttemptedSince?: Date; except?: readonly string[] },
): Promise<readonly DueDelivery[]> {
  const fresh = o.notAttemptedSince
    ? sql.fragment`AND (d.last_attempt_at IS NULL OR d.last_attempt_at < ${o.notAttemptedSince.toISOString()})`
    : sql.fragment``;
  const except = o.except?.length ? sql.fragment`AND d.id <> ALL(${sql.array([...o.except], 'text')})` : sql.fragment``;
  return db.any(sql.type(dueDelivery)`
    SELECT d.id, d.event_id, d.event_type, d.subject_id, d.body, d.attempts
    FROM webhook_deliveries d
    WHERE d.endpoint_id = ${endpointId} AND d.status = 'pending' AND d.next_attempt_at <= ${o.now.toISOString()} ${fresh} ${except}
      AND (d.subject_id IS NULL OR d.event_id IS NULL OR d.id IN (
        SELECT DISTINCT ON (h.subject_id) h.id FROM webhook_deliveries h
        WHERE h.endpoint_id = ${endpointId} AND h.status = 'pending' AND h.subject_id IS NOT NULL AND h.event_id IS NOT NULL
        ORDER BY h.subject_id, h.event_id))
    ORDER BY d.event_id NULLS FIRST, d.created_at
    LIMIT ${o.limit}`);
}

/** When the endpoint's next pending delivery is due (null: none pending). */
export async function nextDueAt(db: CommonQueryMethods, endpointId: string): Promise<string | null> {
  return db.oneFirst(sql.type(z.object({ at: z.string().nullable() }))`
    SELECT min(next_attempt_at) AS at FROM webhook_deliveries WHERE endpoint_id = ${endpointId} AND status = 'pending'`);
}

const sourceEvent = z.object({
  organization_id: z.string(),
  type: z.string(),
  payload: z.record(z.string(), z.unknown()),
  recorded_at: z.string(),
});
export type SourceEvent = z.infer<typeof sourceEvent>;

/** The domain events a batch of deliveries announces, by id (one missing: purged; a delivery outlives its event only by days). */
export async function findSourceEvents(db: CommonQueryMethods, eventIds: readonly number[]): Promise<Map<number, SourceEvent>> {
  if (eventIds.length === 0) return new Map();
  const rows = await db.any(sql.type(sourceEvent.extend({ id: z.number() }))`
    SELECT id::float8 AS id, organization_id, type, payload, recorded_at FROM domain_events
    WHERE id = ANY(${sql.array([...eventIds], 'int8')})`);
  return new Map(rows.map(({ id, ...event }) => [id, event]));
}

/**
 * Fixes deliveries' bodies at their first attempt, in one statement; a body fixed already wins
 * (every attempt signs the same bytes). Returns each delivery's body as stored.
 */
export async function fixBodies(db: CommonQueryMethods, bodies: readonly { id: string; body: string }[]): Promise<Map<string, string>> {
  if (bodies.length === 0) return new Map();
  const rows = await db.any(sql.type(z.object({ id: z.string(), body: z.string() }))`
    UPDATE webhook_deliveries d SET body = COALESCE(d.body, u.body)
    FROM jsonb_to_recordset(${sql.jsonb(bodies.map((b) => ({ id: b.id, body: b.body })))}) AS u(id text, body text)
    WHERE d.id = u.id RETURNING d.id, d.body`);
  return new Map(rows.map((r) => [r.id, r.body]));
}

export interface AttemptRecord {
  deliveryId: string;
  attemptedAt: Date;
  durationMs: number;
  responseStatus: number | null;
  responseExcerpt: string | null;
  error: string | null;
  succeeded: boolean;
  /** The next attempt's time after a failure; null: no more attempts (the delivery is `failed`). */
  nextAttemptAt: Date | null;
}

/**
 * Records attempts of one endpoint's deliveries (in the order they ended) and their outcome on the
 * deliveries and on the endpoint's health, in one transaction: three statements whatever their
 * number. The endpoint's failing_since ends as one attempt at a time would leave it: cleared by a
 * success, set by the first failure after it. Returns it (null: the last attempt succeeded).
 * A delivery no longer pending (redelivered meanwhile is still pending; deleted is gone) is left alone.
 */
export async function recordAttempts(
  pool: DatabasePool,
  endpointId: string,
  attempts: readonly AttemptRecord[],
): Promise<{ failingSince: string | null }> {
  if (attempts.length === 0) return { failingSince: null };
  const rows = attempts.map((a) => {
    const status: DeliveryStatus = a.succeeded ? 'succeeded' : a.nextAttemptAt ? 'pending' : 'failed';
    return {
      delivery_id: a.deliveryId,
      attempted_at: a.attemptedAt.toISOString(),
      response_status: a.responseStatus,
      response_excerpt: a.responseExcerpt,
      error: a.error,
      duration_ms: a.durationMs,
      status,
      next_attempt_at: status === 'pending' ? a.nextAttemptAt!.toISOString() : null,
    };
  });
  let cleared = false;
  let failingFrom: string | null = null;
  for (const a of attempts) {
    if (a.succeeded) {
      cleared = true;
      failingFrom = null;
    } else failingFrom ??= a.attemptedAt.toISOString();
  }
  return pool.transaction(async (tx) => {
    const recordset = sql.fragment`jsonb_to_recordset(${sql.jsonb(rows)}) AS u(delivery_id text, attempted_at timestamptz,
      response_status int, response_excerpt text, error text, duration_ms int, status text, next_attempt_at timestamptz)`;
    await tx.query(sql.unsafe`
      INSERT INTO webhook_delivery_attempts (delivery_id, attempted_at, response_status, response_excerpt, error, duration_ms)
      SELECT u.delivery_id, u.attempted_at, u.response_status, u.response_excerpt, u.error, u.duration_ms FROM ${recordset}
      WHERE EXISTS (SELECT 1 FROM webhook_deliveries WHERE id = u.delivery_id)`);
    await tx.query(sql.unsafe`
      UPDATE webhook_deliveries d SET attempts = d.attempts + 1, status = u.status, next_attempt_at = u.next_attempt_at,
        last_attempt_at = u.attempted_at, last_response_status = u.response_status, last_error = u.error, updated_at = now()
      FROM ${recordset}
      WHERE d.id = u.delivery_id AND d.status = 'pending'`);
    if (failingFrom === null) {
      await tx.query(sql.unsafe`UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ${endpointId} AND failing_since IS NOT NULL`);
      return { failingSince: null };
    }
    const failingSince = await tx.maybeOneFirst(sql.type(z.object({ failing_since: z.string().nullable() }))`
      UPDATE webhook_endpoints SET failing_since = ${cleared ? sql.fragment`${failingFrom}::timestamptz` : sql.fragment`COALESCE(failing_since, ${failingFrom}::timestamptz)`}
      WHERE id = ${endpointId} RETURNING failing_since`);
    return { failingSince: failingSince ?? null };
  });
}

/** Disables an endpoint (Intake's decision after 5 days of failures), with the reason. */
export async function disableEndpoint(db: CommonQueryMethods, endpointId: string, reason: string, at: Date): Promise<boolean> {
  const result = await db.query(sql.unsafe`
    UPDATE webhook_endpoints SET enabled = false, disabled_reason = ${reason}, disabled_at = ${at.toISOString()}, updated_at = now()
    WHERE id = ${endpointId} AND enabled`);
  return result.rowCount > 0;
}

/** Enabled endpoints with a delivery due since before `dueBefore` (the safety sweep wakes their workflows). */
export async function endpointsWithDueDeliveries(db: CommonQueryMethods, dueBefore: Date, limit: number): Promise<readonly string[]> {
  return db.anyFirst(sql.type(z.object({ endpoint_id: z.string() }))`
    SELECT DISTINCT d.endpoint_id FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id AND e.enabled
    WHERE d.status = 'pending' AND d.next_attempt_at <= ${dueBefore.toISOString()}
    LIMIT ${limit}`);
}

export const deliveryRow = z.object({
  id: z.string(),
  endpoint_id: z.string(),
  event_id: z.number().nullable(),
  event_type: z.string(),
  subject_id: z.string().nullable(),
  status: z.enum(DELIVERY_STATUSES),
  attempts: z.number(),
  next_attempt_at: z.string().nullable(),
  last_attempt_at: z.string().nullable(),
  last_response_status: z.number().nullable(),
  last_error: z.string().nullable(),
  body: z.string().nullable(),
  created_at: z.string(),
});
export type DeliveryRow = z.infer<typeof deliveryRow>;

const DELIVERY_COLUMNS = sql.fragment`id, endpoint_id, event_id, event_type, subject_id, status, attempts, next_attempt_at, last_attempt_at,
  last_response_status, last_error, body, created_at`;

/** An endpoint's deliveries, newest first (the REST list). */
export async function listDeliveries(
  db: CommonQueryMethods,
  endpointId: string,
  o: { status?: DeliveryStatus | undefined; limit: number; offset: number },
): Promise<readonly DeliveryRow[]> {
  const status = o.status ? sql.fragment`AND status = ${o.status}` : sql.fragment``;
  return db.any(sql.type(deliveryRow)`
    SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE endpoint_id = ${endpointId} ${status}
    ORDER BY created_at DESC, id DESC LIMIT ${o.limit} OFFSET ${o.offset}`);
}

export async function findDelivery(db: CommonQueryMethods, endpointId: string, deliveryId: string): Promise<DeliveryRow | null> {
  return db.maybeOne(sql.type(deliveryRow)`
    SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE endpoint_id = ${endpointId} AND id = ${deliveryId}`);
}

export const attemptRow = z.object({
  id: z.number(),
  attempted_at: z.string(),
  response_status: z.number().nullable(),
  response_excerpt: z.string().nullable(),
  error: z.string().nullable(),
  duration_ms: z.number(),
});
export type AttemptRow = z.infer<typeof attemptRow>;

export async function listAttempts(db: CommonQueryMethods, deliveryId: string): Promise<readonly AttemptRow[]> {
  return db.any(sql.type(attemptRow)`
    SELECT id, attempted_at, response_status, response_excerpt, error, duration_ms
    FROM webhook_delivery_attempts WHERE delivery_id = ${deliveryId} ORDER BY id`);
}

/** An endpoint of the organization (null: none, or another organization's: a 404 either way). */
export async function findOrganizationEndpoint(
  db: CommonQueryMethods,
  organizationId: string,
  endpointId: string,
): Promise<{ id: string; organization_id: string; enabled: boolean } | null> {
  if (!isUuid(endpointId)) return null;
  return db.maybeOne(sql.type(z.object({ id: z.string(), organization_id: z.string(), enabled: z.boolean() }))`
    SELECT id, organization_id, enabled FROM webhook_endpoints WHERE id = ${endpointId} AND organization_id = ${organizationId}`);
}

/** Wakes the endpoint's sender when the transaction commits (the workers' LISTEN, src/webhooks/waker.ts). */
export async function notifyEndpoint(tx: CommonQueryMethods, endpointId: string): Promise<void> {
  await tx.query(sql.unsafe`SELECT pg_notify(${WEBHOOK_WAKE_CHANNEL}, ${endpointId})`);
}

/** The channel on which the workers announce their sender calls' beginnings and ends (src/webhooks/wakes.ts). */
export const WEBHOOK_SENDER_CHANNEL = 'intake_webhook_senders';

/** Announces a sender call to every worker's waker (a NOTIFY of its own: no transaction waits on it). */
export async function announceSenderCall(db: CommonQueryMethods, payload: string): Promise<void> {
  await db.query(sql.unsafe`SELECT pg_notify(${WEBHOOK_SENDER_CHANNEL}, ${payload})`);
}

/** Pending again and due now, with the same id (the `webhook-id`) and body; its attempts so far are kept. */
export async function redeliver(pool: DatabasePool, endpointId: string, deliveryId: string): Promise<DeliveryRow | null> {
  return pool.transaction(async (tx) => {
    const row = await tx.maybeOne(sql.type(deliveryRow)`
      UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = now(), updated_at = now()
      WHERE endpoint_id = ${endpointId} AND id = ${deliveryId}
      RETURNING ${DELIVERY_COLUMNS}`);
    if (row) await notifyEndpoint(tx, endpointId);
    return row;
  });
}

/** A `webhook.test` delivery to one endpoint (no domain event), its body fixed now; the sender is woken. */
export async function createTestDelivery(
  pool: DatabasePool,
  endpoint: { id: string; organizationId: string },
  body: (deliveryId: string) => string,
): Promise<DeliveryRow> {
  return pool.transaction(async (tx) => {
    const id = await tx.oneFirst(sql.type(z.object({ id: z.string() }))`SELECT 'msg_' || replace(gen_random_uuid()::text, '-', '') AS id`);
    const row = await tx.one(sql.type(deliveryRow)`
      INSERT INTO webhook_deliveries (id, endpoint_id, organization_id, event_type, body, next_attempt_at)
      VALUES (${id}, ${endpoint.id}, ${endpoint.organizationId}, 'webhook.test', ${body(id)}, now())
      RETURNING ${DELIVERY_COLUMNS}`);
    await notifyEndpoint(tx, endpoint.id);
    return row;
  });
}

/**
 * Deletes the deliveries about these resources, sent or not (their bodies hold the resource as the
 * REST API showed it): a deleted resource is not delivered afterwards, and its content does not stay
 * in the delivery log (issue 32).
 */
export async function forgetDeliverySubjects(tx: CommonQueryMethods, organizationId: string, subjectIds: readonly string[]): Promise<void> {
  if (!subjectIds.length) return;
  await tx.query(sql.unsafe`
    DELETE FROM webhook_deliveries WHERE organization_id = ${organizationId} AND subject_id = ANY(${sql.array([...subjectIds], 'uuid')})`);
}

/** The domain events and webhook deliveries about these deleted resources of one organization (both hold their content). */
export async function forgetSubjectTraces(tx: CommonQueryMethods, organizationId: string, subjectIds: readonly string[]): Promise<void> {
  await forgetDeliverySubjects(tx, organizationId, subjectIds);
  await forgetEventSubjects(tx, organizationId, subjectIds);
}
