import type { DatabasePool } from 'slonik';
import { addCredits } from '../db/repositories/organizations.js';

/** A top-up as the operator API and `intake credits add` express it. */
export interface TopUp {
  organizationId: string;
  /** Credits added (positive). */
  amount: number;
  /** The ledger line's reason. */
  reason: string;
}

export interface TopUpResult {
  organizationId: string;
  balance: number;
  /** Billing-blocked sessions whose workflows were woken now. */
  resumedSessions: number;
}

/**
 * The use case "credits added, blocked sessions resumed" (issue 30, point 8), for both the operator
 * API and the CLI: the balance and its ledger line in one transaction, then, committed, the
 * organization's billing-blocked sessions woken by `resume` (each caller reaches Temporal its own
 * way, best effort: a running blocked workflow re-checks the balance by itself). The sessions'
 * `agent_session.billing_resumed` events come from their next analysis round, which moves them.
 * Null when the organization is unknown.
 */
export async function topUpCredits(
  pool: DatabasePool,
  topUp: TopUp,
  resume: (organizationId: string) => Promise<number>,
): Promise<TopUpResult | null> {
  const org = await pool.transaction((tx) => addCredits(tx, topUp.organizationId, topUp.amount, topUp.reason));
  if (!org) return null;
  return { organizationId: org.id, balance: org.credit_balance, resumedSessions: await resume(org.id) };
}
