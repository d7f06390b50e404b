import { ScheduleOverlapPolicy, type Client, type ScheduleOptionsAction } from '@temporalio/client';
import { TemporalGateway } from './gateway.js';
import type { Logger } from '../logger.js';
import { RETENTION_SCHEDULE_ID, RETENTION_SWEEP_WORKFLOW, retentionSweepWorkflowId } from '../../workflows/retention-sweep/contract.js';
import {
  SESSION_WAKES_SCHEDULE_ID,
  SESSION_WAKES_WORKFLOW,
  sessionWakesWorkflowId,
  type SessionWakesInput,
  type SessionWorkflowSettingsInput,
} from '../../workflows/session-wakes/contract.js';
import {
  MEDIA_RECONCILER_SCHEDULE_ID,
  MEDIA_RECONCILER_WORKFLOW,
  mediaReconcilerWorkflowId,
  type MediaReconcilerInput,
  type MediaWorkflowSettingsInput,
} from '../../workflows/media-reconciler/contract.js';

export interface RetentionScheduleOptions {
  taskQueue: string;
  everyMinutes: number;
  /** Tests use their own id; production has one schedule per namespace. */
  scheduleId?: string;
}

// The gateway of the schedules (retention sweep, session wakes, media reconciler): created or
// updated at worker start with the worker's admin client, through the Temporal gateway.

/**
 * The retention sweep's Temporal Schedule, created at worker start (idempotent: an existing one
 * is brought to the configured interval and task queue). Overlaps are skipped: a long sweep is
 * never joined by a second one. Run a sweep now: `temporal schedule trigger --schedule-id agent-retention-sweep`.
 */
export async function ensureRetentionSchedule(client: Client, o: RetentionScheduleOptions, logger: Pick<Logger, 'info'>): Promise<string> {
  return ensureSchedule(
    client,
    {
      scheduleId: o.scheduleId,
      defaultId: RETENTION_SCHEDULE_ID,
      workflowType: RETENTION_SWEEP_WORKFLOW,
      workflowId: retentionSweepWorkflowId(),
      taskQueue: o.taskQueue,
      input: {},
      every: `${o.everyMinutes} minutes`,
    },
    (scheduleId) => logger.info({ scheduleId, everyMinutes: o.everyMinutes }, 'created the retention sweep schedule'),
  );
}

/**
 * Creates a schedule that starts `workflowType` with `input` every `every`, or brings an existing
 * one to this interval and action (every worker runs this at start). Overlaps are skipped: a long
 * run is never joined by a second one. A test's own `scheduleId` gets a workflow id of its own too.
 */
async function ensureSchedule(
  client: Client,
  s: {
    scheduleId: string | undefined;
    defaultId: string;
    workflowType: string;
    workflowId: string;
    taskQueue: string;
    input: unknown;
    every: `${number} ${'seconds' | 'minutes'}`;
  },
  created: (scheduleId: string) => void,
): Promise<string> {
  const scheduleId = s.scheduleId ?? s.defaultId;
  const action: ScheduleOptionsAction = {
    type: 'startWorkflow',
    workflowType: s.workflowType,
    workflowId: s.scheduleId ? `${s.workflowId}/${scheduleId}` : s.workflowId,
    taskQueue: s.taskQueue,
    args: [s.input],
  };
  const spec = { intervals: [{ every: s.every }] };
  const temporal = TemporalGateway.of(client);
  const outcome = await temporal.call(
    'startup',
    (c) => c.schedule.create({ scheduleId, spec, action, policies: { overlap: ScheduleOverlapPolicy.SKIP } }),
    ['schedule_exists'],
  );
  if (outcome.ok) created(scheduleId);
  else await temporal.run('startup', (c) => c.schedule.getHandle(scheduleId).update((previous) => ({ ...previous, spec, action })));
  return scheduleId;
}

export interface SessionWakesScheduleOptions {
  taskQueue: string;
  /** How often it runs, and how old a requested wake must be to count as stranded. */
  everySeconds: number;
  settings: SessionWorkflowSettingsInput;
  /** Tests use their own id; production has one schedule per namespace. */
  scheduleId?: string;
}

/**
 * The reconciler of agent session wakes (`agent-session-wakes`), created at worker start like the
 * retention sweep's schedule: every AGENT_WAKE_RECONCILE_SECONDS it wakes the sessions whose
 * requested wake is older than that: a safety net behind the session drainer. Overlaps are skipped.
 */
export async function ensureSessionWakesSchedule(
  client: Client,
  o: SessionWakesScheduleOptions,
  logger: Pick<Logger, 'info'>,
): Promise<string> {
  const input: SessionWakesInput = { olderThanSeconds: o.everySeconds, settings: o.settings };
  return ensureSchedule(
    client,
    {
      scheduleId: o.scheduleId,
      defaultId: SESSION_WAKES_SCHEDULE_ID,
      workflowType: SESSION_WAKES_WORKFLOW,
      workflowId: sessionWakesWorkflowId(),
      taskQueue: o.taskQueue,
      input,
      every: `${o.everySeconds} seconds`,
    },
    (scheduleId) => logger.info({ scheduleId, everySeconds: o.everySeconds }, 'created the session wakes schedule'),
  );
}

export interface MediaReconcilerScheduleOptions {
  taskQueue: string;
  everySeconds: number;
  olderThanSeconds: number;
  settings: MediaWorkflowSettingsInput;
  /** Tests use their own id; production has one schedule per namespace. */
  scheduleId?: string;
}

/**
 * The media reconciler (`media-reconciler`), created at worker start like the other schedules:
 * every MEDIA_RECONCILE_SECONDS, active ingestions without a running workflow are started again or
 * failed. Overlaps are skipped.
 */
export async function ensureMediaReconcilerSchedule(
  client: Client,
  o: MediaReconcilerScheduleOptions,
  logger: Pick<Logger, 'info'>,
): Promise<string> {
  const input: MediaReconcilerInput = { olderThanSeconds: o.olderThanSeconds, settings: o.settings };
  return ensureSchedule(
    client,
    {
      scheduleId: o.scheduleId,
      defaultId: MEDIA_RECONCILER_SCHEDULE_ID,
      workflowType: MEDIA_RECONCILER_WORKFLOW,
      workflowId: mediaReconcilerWorkflowId(),
      taskQueue: o.taskQueue,
      input,
      every: `${o.everySeconds} seconds`,
    },
    (scheduleId) => logger.info({ scheduleId, everySeconds: o.everySeconds }, 'created the media reconciler schedule'),
  );
}
