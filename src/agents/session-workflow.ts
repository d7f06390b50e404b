import type { Client } from '@temporalio/client';
import type { DatabasePool } from 'slonik';
import { sql } from 'slonik';
import { z } from 'zod';
import type { Config } from '../config.js';
import { forEachLimited } from '../concurrency.js';
import { ORGANIZATION_ID, SESSION_ID, STATUS } from '../temporal/search-attributes.js';
import {
  AGENT_SESSION_WORKFLOW, agentSessionWorkflowId, creditsAdded, type AgentSessionInput, type SessionStatus,
} from '../../workflows/agent-session/contract.js';

/** How every caller starts `agent-session/<sessionId>`: one input shape, one set of search attributes. */
export function sessionWorkflowStart(
  config: Pick<Config, 'agents' | 'temporal'>,
  session: { organizationId: string; sessionId: string; status: SessionStatus },
) {
  const input: AgentSessionInput = {
    version: 2,
    organizationId: session.organizationId,
    sessionId: session.sessionId,
    idleTimeoutSeconds: config.agents.sessionIdleSeconds,
    billingRecheckSeconds: config.agents.billingRecheckSeconds,
    activityTimeoutSeconds: config.agents.activityTimeoutSeconds,
    historyLimit: config.agents.historyLimit,
  };
  return {
    workflowId: agentSessionWorkflowId(session.sessionId),
    taskQueue: config.temporal.taskQueue,
    args: [input] as [AgentSessionInput],
    typedSearchAttributes: [
      { key: ORGANIZATION_ID, value: session.organizationId },
      { key: SESSION_ID, value: session.sessionId },
      { key: STATUS, value: session.status },
    ],
  };
}

const RESUME_CONCURRENCY = 16;

const blockedRow = z.object({ id: z.string(), status: z.enum(['open', 'ended', 'abandoned']) });

/**
 * After a top-up: wakes (or restarts, when they closed while idle) the workflows of the
 * organization's billing-blocked sessions, so that their queued analyses run now. Best effort: a
 * running blocked workflow also re-checks the balance by itself every AGENT_BILLING_RECHECK_SECONDS.
 */
export async function resumeBlockedSessions(
  pool: DatabasePool,
  client: Client,
  config: Pick<Config, 'agents' | 'temporal'>,
  organizationId: string,
): Promise<number> {
  const sessions = await pool.any(sql.type(blockedRow)`
    SELECT id, status FROM agent_sessions WHERE organization_id = ${organizationId} AND processing_status = 'billing_blocked'`);
  // A bounded number in flight: an organization may have many blocked sessions.
  let resumed = 0;
  await forEachLimited(sessions, RESUME_CONCURRENCY, async (s) => {
    const ok = await client.workflow.signalWithStart(AGENT_SESSION_WORKFLOW, {
      ...sessionWorkflowStart(config, { organizationId, sessionId: s.id, status: s.status }),
      signal: creditsAdded,
      signalArgs: [],
    }).then(() => true, () => false);
    if (ok) resumed++;
  });
  return resumed;
}
