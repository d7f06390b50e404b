import { WithStartWorkflowOperation } from '@temporalio/client';
import type { TemporalGateway } from '../temporal/gateway.js';
import { ORGANIZATION_ID, RECORDING_ID, STATUS } from '../temporal/search-attributes.js';
import { botAcceptedUpdate, MEETING_JOIN_WORKFLOW, type MeetingJoinInput } from '../../workflows/meeting-join/contract.js';

/**
 * The gateway of `meeting-join/<organizationId>/<identityHash>`: starts the run (or finds the
 * meeting's active one: use-existing) and waits, within the `botAccepted` deadline, for the
 * recorder to accept its bot. Answers the run's recording, or the recorder's failure.
 */
export async function requestMeetingBot(
  temporal: TemporalGateway,
  o: { workflowId: string; taskQueue: string; input: MeetingJoinInput },
): Promise<{ recordingId: string } | { recorderFailed: string }> {
  const start = new WithStartWorkflowOperation(MEETING_JOIN_WORKFLOW, {
    workflowId: o.workflowId,
    workflowIdConflictPolicy: 'USE_EXISTING',
    taskQueue: o.taskQueue,
    args: [o.input],
    typedSearchAttributes: [
      { key: ORGANIZATION_ID, value: o.input.organizationId },
      { key: RECORDING_ID, value: o.input.recordingId },
      { key: STATUS, value: 'creating_bot' },
    ],
  });
  const outcome = await temporal.call(
    'botAccepted',
    (client) => client.workflow.executeUpdateWithStart(botAcceptedUpdate, { startWorkflowOperation: start }),
    ['update_failed'],
  );
  return outcome.ok ? outcome.value : { recorderFailed: outcome.refusal.message };
}

/**
 * Terminates the meeting's open run if it makes this recording (a meeting's workflow id is used
 * again by its next join: a later run is left alone); false: no such run was open.
 */
export async function terminateMeetingJoinOf(
  temporal: TemporalGateway,
  workflowId: string,
  recordingId: string,
  reason: string,
): Promise<boolean> {
  const described = await temporal.call('request', (client) => client.workflow.getHandle(workflowId).describe(), ['not_found']);
  if (!described.ok) return false;
  const run = described.value;
  if (run.status.name !== 'RUNNING' || run.typedSearchAttributes.get(RECORDING_ID) !== recordingId) return false;
  const outcome = await temporal.call('request', (client) => client.workflow.getHandle(workflowId, run.runId).terminate(reason), [
    'not_found',
  ]);
  return outcome.ok;
}
