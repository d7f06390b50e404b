import type { DatabasePool } from 'slonik';
import type { Config } from '../config.js';
import { forEachLimited } from '../concurrency.js';
import { inStoredTrace } from '../telemetry/tracing.js';
import { billingBlockedSessions, strandedWakes } from '../db/repositories/agent-sessions.js';
import { deadlineAfter, type TemporalGateway } from '../temporal/gateway.js';
import { effectiveProcessingStatus } from '../domain/agent-session-state.js';
import { ORGANIZATION_ID, SESSION_ID, STATUS } from '../temporal/search-attributes.js';
import {
  AGENT_SESSION_WORKFLOW,
  agentSessionWorkflowId,
  creditsAddedSignal,
  eventsIngestedSignal,
  type AgentSessionInput,
  type EventsIngested,
  type ProcessingStatus,
  type SessionStatus,
} from '../../workflows/agent-session/contract.js';
import type { SessionWorkflowSettingsInput } from '../../workflows/session-wakes/contract.js';

/**
 * What starting `agent-session/<sessionId>` needs besides the session: from configuration, or
 * carried by the reconciler's schedule (whose input declares the shape).
 */
export type SessionWorkflowSettings = SessionWorkflowSettingsInput;

export function sessionWorkflowSettings(config: Pick<Config, 'agents' | 'temporal'>): SessionWorkflowSettings {
  return {
    taskQueue: config.temporal.taskQueue,
    idleTimeoutSeconds: config.agents.sessionIdleSeconds,
    billingRecheckSeconds: config.agents.billingRecheckSeconds,
    activityTimeoutSeconds: config.agents.activityTimeoutSeconds,
    historyLimit: config.agents.historyLimit,
  };
}

/**
 * The gateway of `agent-session/<sessionId>`: every call made to it (wakes, credits added) goes
 * through here and the Temporal gateway (deadlines, errors: a 503 `temporal_unavailable`).
 *
 * How every caller starts `agent-session/<sessionId>`: one input shape, one set of search attributes.
 */
export function sessionWorkflowStart(
  settings: SessionWorkflowSettings,
  session: { organizationId: string; sessionId: string; status: SessionStatus },
) {
  const input: AgentSessionInput = {
    organizationId: session.organizationId,
    sessionId: session.sessionId,
    idleTimeoutSeconds: settings.idleTimeoutSeconds,
    billingRecheckSeconds: settings.billingRecheckSeconds,
    activityTimeoutSeconds: settings.activityTimeoutSeconds,
    historyLimit: settings.historyLimit,
  };
  return {
    workflowId: agentSessionWorkflowId(session.sessionId),
    taskQueue: settings.taskQueue,
    args: [input] as [AgentSessionInput],
    typedSearchAttributes: [
      { key: ORGANIZATION_ID, value: session.organizationId },
      { key: SESSION_ID, value: session.sessionId },
      { key: STATUS, value: session.status },
    ],
  };
}

/** A session whose workflow is to be woken: it processes whatever is stored since its watermark. */
export interface WakeTarget {
  organizationId: string;
  sessionId: string;
  status: SessionStatus;
  highestSequence: number | null;
  processingStatus: ProcessingStatus;
  /** The trace of the ingest that requested the wake (tracing on): telling the workflow continues it. */
  traceParent: string | null;
}

/** A stored session as the wake target its workflow is told about. */
export function wakeTargetOf(s: {
  id: string;
  organization_id: string;
  status: SessionStatus;
  highest_sequence: number | null;
  processing_status: string;
  wake_trace_parent: string | null;
}): WakeTarget {
  const processingStatus: ProcessingStatus = effectiveProcessingStatus(s.processing_status);
  return {
    organizationId: s.organization_id,
    sessionId: s.id,
    status: s.status,
    highestSequence: s.highest_sequence,
    processingStatus,
    traceParent: s.wake_trace_parent,
  };
}

/**
 * Starts the session's workflow, or pokes the running one (spec: one per session). With tracing on,
 * in a span of the trace of the ingest that asked for it, so that the workflow continues that trace.
 */
export async function wakeSession(temporal: TemporalGateway, settings: SessionWorkflowSettings, target: WakeTarget): Promise<void> {
  const signal: EventsIngested = {
    highestSequence: target.highestSequence,
    status: target.status,
    processingStatus: target.processingStatus,
  };
  await inStoredTrace(target.traceParent, 'wake agent session', { 'intake.session_id': target.sessionId }, () =>
    // Bounded: a caller with Temporal unreachable tries again later instead of waiting on gRPC retries.
    temporal.run('notify', (client) =>
      client.workflow.signalWithStart(AGENT_SESSION_WORKFLOW, {
        ...sessionWorkflowStart(settings, target),
        signal: eventsIngestedSignal,
        signalArgs: [signal],
      }),
    ),
  );
}

/**
 * Tells the session's workflow (started again if it closed while idle) that its organization has
 * credits again; `deadline`: a batch's shared one, else `notify`.
 */
export async function tellCreditsAdded(
  temporal: TemporalGateway,
  settings: SessionWorkflowSettings,
  session: { organizationId: string; sessionId: string; status: SessionStatus },
  deadline: Date | 'notify' = 'notify',
): Promise<void> {
  await temporal.run(deadline, (client) =>
    client.workflow.signalWithStart(AGENT_SESSION_WORKFLOW, {
      ...sessionWorkflowStart(settings, session),
      signal: creditsAddedSignal,
      signalArgs: [],
    }),
  );
}

const WAKES_IN_FLIGHT = 16;

/**
 * The reconciler: wakes sessions whose wake was requested more than `olderThanSeconds` ago and
 * never taken (a lost signal, an outage, a process that died before sending it). Returns how many
 * it found and how many it woke; a session it could not wake now stays requested for the next round.
 */
export async function wakeStrandedSessions(
  pool: DatabasePool,
  temporal: TemporalGateway,
  settings: SessionWorkflowSettings,
  o: { olderThanSeconds: number; limit: number },
): Promise<{ stranded: number; woken: number }> {
  const stranded = await strandedWakes(pool, o.olderThanSeconds, o.limit);
  let woken = 0;
  await forEachLimited(stranded, WAKES_IN_FLIGHT, async (s) => {
    // One that cannot be woken now stays requested for the next round; the others go on.
    if (
      await wakeSession(temporal, settings, wakeTargetOf(s)).then(
        () => true,
        () => false,
      )
    )
      woken++;
  });
  return { stranded: stranded.length, woken };
}

const RESUME_CONCURRENCY = 16;

/**
 * After a top-up: wakes (or restarts, when they closed while idle) the workflows of the
 * organization's billing-blocked sessions, so that their queued analyses run now, all within one
 * `request` deadline. Best effort: a running blocked workflow also re-checks the balance by itself
 * every AGENT_BILLING_RECHECK_SECONDS.
 */
export async function resumeBlockedSessions(
  pool: DatabasePool,
  temporal: TemporalGateway,
  config: Pick<Config, 'agents' | 'temporal'>,
  organizationId: string,
): Promise<number> {
  const sessions = await billingBlockedSessions(pool, organizationId);
  // A bounded number in flight: an organization may have many blocked sessions.
  let resumed = 0;
  const settings = sessionWorkflowSettings(config);
  // One deadline for the whole batch: the request that asked for it waits at most this long.
  const deadline = deadlineAfter('request');
  await forEachLimited(sessions, RESUME_CONCURRENCY, async (s) => {
    const ok = await tellCreditsAdded(temporal, settings, { organizationId, sessionId: s.id, status: s.status }, deadline).then(
      () => true,
      () => false,
    );
    if (ok) resumed++;
  });
  return resumed;
}
