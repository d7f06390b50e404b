import { sql, type CommonQueryMethods, type DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
import { isUuid } from '../uuid.js';

/**
 * Webhook endpoints as their owners manage them (issue 31): every statement on the configuration
 * columns of `webhook_endpoints`. The sealed secrets are written here but never read back: the
 * management row carries none of them.
 */
export const webhookEndpointRow = z.object({
  id: z.string(),
  organization_id: z.string(),
  url: z.string(),
  description: z.string(),
  /** null: every event type, including types added later. */
  event_types: z.array(z.string()).nullable(),
  enabled: z.boolean(),
  disabled_reason: z.string().nullable(),
  disabled_at: z.string().nullable(),
  /** Null once it has passed: only a previous secret that still signs is shown. */
  previous_secret_expires_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type WebhookEndpointRow = z.infer<typeof webhookEndpointRow>;

const columns = sql.fragment`
  id, organization_id, url, description, event_types, enabled, disabled_reason, disabled_at,
  CASE WHEN previous_secret_expires_at > now() THEN previous_secret_expires_at END AS previous_secret_expires_at,
  created_at, updated_at`;

const eventTypesValue = (types: readonly string[] | null) => (types === null ? null : sql.array([...types], 'text'));

/** Serializes one organization's endpoint creations (transaction-scoped), so that the per-organization limit holds under concurrency. */
export async function lockOrganizationWebhookEndpoints(tx: DatabaseTransactionConnection, organizationId: string): Promise<void> {
  await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(hashtextextended(${`webhook-endpoints:${organizationId}`}, 0))`);
}

export async function countWebhookEndpoints(db: CommonQueryMethods, organizationId: string): Promise<number> {
  return db.oneFirst(sql.type(z.object({ n: z.number() }))`
    SELECT count(*)::int AS n FROM webhook_endpoints WHERE organization_id = ${organizationId}`);
}

export async function insertWebhookEndpoint(
  db: CommonQueryMethods,
  input: {
    organizationId: string;
    url: string;
    description: string;
    eventTypes: readonly string[] | null;
    /** null: enabled; otherwise created disabled, for this reason. */
    disabledReason: string | null;
    secretSealed: string;
  },
): Promise<WebhookEndpointRow> {
  const enabled = input.disabledReason === null;
  return db.one(sql.type(webhookEndpointRow)`
    INSERT INTO webhook_endpoints (organization_id, url, description, event_types, enabled, disabled_reason, disabled_at, secret_sealed)
    VALUES (
      ${input.organizationId}, ${input.url}, ${input.description}, ${eventTypesValue(input.eventTypes)}, ${enabled},
      ${input.disabledReason}, ${enabled ? null : sql.fragment`now()`}, ${input.secretSealed}
    )
    RETURNING ${columns}`);
}

export async function findWebhookEndpoint(db: CommonQueryMethods, organizationId: string, id: string): Promise<WebhookEndpointRow | null> {
  if (!isUuid(id)) return null;
  return db.maybeOne(sql.type(webhookEndpointRow)`
    SELECT ${columns} FROM webhook_endpoints WHERE id = ${id} AND organization_id = ${organizationId}`);
}

/** The same, locked for the rest of the transaction: a change reads what it rewrites (an owner's PATCH and Intake disabling a failing endpoint lose nothing). */
export async function lockWebhookEndpoint(
  tx: DatabaseTransactionConnection,
  organizationId: string,
  id: string,
): Promise<WebhookEndpointRow | null> {
  if (!isUuid(id)) return null;
  return tx.maybeOne(sql.type(webhookEndpointRow)`
    SELECT ${columns} FROM webhook_endpoints WHERE id = ${id} AND organization_id = ${organizationId} FOR UPDATE`);
}

export async function listWebhookEndpoints(
  db: CommonQueryMethods,
  organizationId: string,
  page: { offset: number; limit: number },
): Promise<readonly WebhookEndpointRow[]> {
  return db.any(sql.type(webhookEndpointRow)`
    SELECT ${columns} FROM webhook_endpoints WHERE organization_id = ${organizationId}
    ORDER BY created_at, id LIMIT ${page.limit} OFFSET ${page.offset}`);
}

export interface WebhookEndpointSettings {
  url: string;
  description: string;
  eventTypes: readonly string[] | null;
  /**
   * `enable`: enabled, with the disabled reason and time and the current run of failures cleared;
   * `disable`: disabled now for `disabledReason`; null: as it is.
   */
  transition: { to: 'enable' } | { to: 'disable'; disabledReason: string } | null;
  /** The URL changed: a new receiver starts with no run of failures. */
  resetFailures: boolean;
}

export async function updateWebhookEndpoint(db: CommonQueryMethods, id: string, s: WebhookEndpointSettings): Promise<WebhookEndpointRow> {
  const state =
    s.transition?.to === 'enable'
      ? sql.fragment`, enabled = true, disabled_reason = NULL, disabled_at = NULL, failing_since = NULL`
      : s.transition?.to === 'disable'
        ? sql.fragment`, enabled = false, disabled_reason = ${s.transition.disabledReason}, disabled_at = now()`
        : sql.fragment``;
  // Enabling clears the run of failures already (a column is assigned once).
  const failures = s.resetFailures && s.transition?.to !== 'enable' ? sql.fragment`, failing_since = NULL` : sql.fragment``;
  return db.one(sql.type(webhookEndpointRow)`
    UPDATE webhook_endpoints SET
      url = ${s.url}, description = ${s.description}, event_types = ${eventTypesValue(s.eventTypes)}, updated_at = now()
      ${state} ${failures}
    WHERE id = ${id}
    RETURNING ${columns}`);
}

/** Deletes the endpoint and (by cascade) its deliveries and their attempts. */
export async function deleteWebhookEndpoint(
  db: CommonQueryMethods,
  organizationId: string,
  id: string,
): Promise<WebhookEndpointRow | null> {
  if (!isUuid(id)) return null;
  return db.maybeOne(sql.type(webhookEndpointRow)`
    DELETE FROM webhook_endpoints WHERE id = ${id} AND organization_id = ${organizationId}
    RETURNING ${columns}`);
}

/**
 * Puts a new sealed secret in place; the current one becomes the previous, valid for `previousValidSeconds`
 * more (an earlier previous secret is dropped). One statement: the right-hand sides read the row as it was.
 */
export async function replaceWebhookEndpointSecret(
  db: CommonQueryMethods,
  organizationId: string,
  id: string,
  input: { secretSealed: string; previousValidSeconds: number },
): Promise<WebhookEndpointRow | null> {
  if (!isUuid(id)) return null;
  return db.maybeOne(sql.type(webhookEndpointRow)`
    UPDATE webhook_endpoints SET
      previous_secret_sealed = secret_sealed,
      previous_secret_expires_at = now() + make_interval(secs => ${input.previousValidSeconds}),
      secret_sealed = ${input.secretSealed},
      updated_at = now()
    WHERE id = ${id} AND organization_id = ${organizationId}
    RETURNING ${columns}`);
}
