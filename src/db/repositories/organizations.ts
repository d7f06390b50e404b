import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Tx } from '../pool.js';
import { isUuid } from '../uuid.js';

export const organizationRow = z.object({
  id: z.string(),
  name: z.string(),
  recording_allowed: z.boolean(),
  agent_chats_enabled: z.boolean(),
  credit_balance: z.number(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type OrganizationRow = z.infer<typeof organizationRow>;

/** Creates the organization with its initial credits and their ledger line. */
export async function createOrganization(
  tx: Tx,
  input: { name: string; recordingAllowed: boolean; credits: number },
): Promise<OrganizationRow> {
  const org = await tx.one(sql.type(organizationRow)`
    INSERT INTO organizations (name, recording_allowed, credit_balance)
    VALUES (${input.name}, ${input.recordingAllowed}, ${input.credits})
    RETURNING *`);
  if (input.credits > 0) {
    await tx.query(sql.unsafe`
      INSERT INTO credit_transactions (organization_id, amount, reason, balance_after)
      VALUES (${org.id}, ${input.credits}, 'initial', ${input.credits})`);
  }
  return org;
}

export async function findOrganization(db: CommonQueryMethods, id: string): Promise<OrganizationRow | null> {
  if (!isUuid(id)) return null;
  return db.maybeOne(sql.type(organizationRow)`SELECT * FROM organizations WHERE id = ${id}`);
}

/** Adds credits and records the change in the ledger (see topUpCredits). Null when the organization is unknown. */
export async function addCredits(tx: Tx, organizationId: string, amount: number, reason: string): Promise<OrganizationRow | null> {
  if (!isUuid(organizationId)) return null;
  const org = await tx.maybeOne(sql.type(organizationRow)`
    UPDATE organizations SET credit_balance = credit_balance + ${amount}, updated_at = now()
    WHERE id = ${organizationId}
    RETURNING *`);
  if (!org) return null;
  await tx.query(sql.unsafe`
    INSERT INTO credit_transactions (organization_id, amount, reason, balance_after)
    VALUES (${organizationId}, ${amount}, ${reason}, ${org.credit_balance})`);
  return org;
}

export const creditTransactionRow = z.object({
  id: z.number(),
  amount: z.number(),
  reason: z.string(),
  balance_after: z.number(),
  created_at: z.string(),
});
export type CreditTransactionRow = z.infer<typeof creditTransactionRow>;

/** The organization's credit ledger, newest first: every top-up and every spend, with the balance after it. */
export async function listCreditTransactions(
  db: CommonQueryMethods,
  organizationId: string,
  page: { offset: number; limit: number },
): Promise<readonly CreditTransactionRow[]> {
  return db.any(sql.type(creditTransactionRow)`
    SELECT id, amount, reason, balance_after, created_at FROM credit_transactions
    WHERE organization_id = ${organizationId}
    ORDER BY created_at DESC, id DESC LIMIT ${page.limit} OFFSET ${page.offset}`);
}

/** Switches of an organization; absent ones keep their value. Null when the organization is unknown. */
export async function updateOrganizationFlags(
  db: CommonQueryMethods,
  organizationId: string,
  flags: { agentChatsEnabled?: boolean | undefined; recordingAllowed?: boolean | undefined },
): Promise<OrganizationRow | null> {
  if (!isUuid(organizationId)) return null;
  return db.maybeOne(sql.type(organizationRow)`
    UPDATE organizations SET
      agent_chats_enabled = coalesce(${flags.agentChatsEnabled ?? null}::boolean, agent_chats_enabled),
      recording_allowed = coalesce(${flags.recordingAllowed ?? null}::boolean, recording_allowed),
      updated_at = now()
    WHERE id = ${organizationId}
    RETURNING *`);
}

/** Every organization, oldest first (operators' `intake org list`). */
export async function listOrganizations(
  db: CommonQueryMethods,
  page: { offset: number; limit: number },
): Promise<readonly OrganizationRow[]> {
  return db.any(sql.type(organizationRow)`
    SELECT * FROM organizations ORDER BY created_at, id LIMIT ${page.limit} OFFSET ${page.offset}`);
}

export const organizationCountsRow = z.object({
  users: z.number(),
  active_api_keys: z.number(),
  agent_applications: z.number(),
  webhook_endpoints: z.number(),
  feedback_sources: z.number(),
  people: z.number(),
  recordings: z.number(),
  agent_sessions: z.number(),
});
export type OrganizationCounts = z.infer<typeof organizationCountsRow>;

/** What the organization holds, counted (`intake org show`). */
export async function organizationCounts(db: CommonQueryMethods, organizationId: string): Promise<OrganizationCounts> {
  return db.one(sql.type(organizationCountsRow)`
    SELECT
      (SELECT count(*) FROM users WHERE organization_id = ${organizationId})::int AS users,
      (SELECT count(*) FROM api_keys WHERE organization_id = ${organizationId} AND revoked_at IS NULL)::int AS active_api_keys,
      (SELECT count(*) FROM agent_applications WHERE organization_id = ${organizationId} AND deleted_at IS NULL)::int AS agent_applications,
      (SELECT count(*) FROM webhook_endpoints WHERE organization_id = ${organizationId})::int AS webhook_endpoints,
      (SELECT count(*) FROM feedback_sources WHERE organization_id = ${organizationId})::int AS feedback_sources,
      (SELECT count(*) FROM people WHERE organization_id = ${organizationId})::int AS people,
      (SELECT count(*) FROM recordings WHERE organization_id = ${organizationId})::int AS recordings,
      (SELECT count(*) FROM agent_sessions WHERE organization_id = ${organizationId})::int AS agent_sessions`);
}
