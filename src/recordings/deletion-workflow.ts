import type { TemporalGateway } from '../temporal/gateway.js';
import { ORGANIZATION_ID, RECORDING_ID } from '../temporal/search-attributes.js';
import {
  RECORDING_DELETION_WORKFLOW,
  recordingDeletionWorkflowId,
  type RecordingDeletionInput,
} from '../../workflows/recording-deletion/contract.js';

/** The gateway of `recording-deletion/<recordingId>`. */

export interface RecordingDeletionSettings {
  taskQueue: string;
  settleSeconds: number;
}

/** Starts the deletion's workflow: `already_started` when it runs already. */
export async function startRecordingDeletionWorkflow(
  temporal: TemporalGateway,
  settings: RecordingDeletionSettings,
  ids: { organizationId: string; recordingId: string },
): Promise<'started' | 'already_started'> {
  const input: RecordingDeletionInput = { recordingId: ids.recordingId, settleSeconds: settings.settleSeconds };
  const outcome = await temporal.call(
    'request',
    (client) =>
      client.workflow.start(RECORDING_DELETION_WORKFLOW, {
        workflowId: recordingDeletionWorkflowId(ids.recordingId),
        taskQueue: settings.taskQueue,
        args: [input],
        typedSearchAttributes: [
          { key: ORGANIZATION_ID, value: ids.organizationId },
          { key: RECORDING_ID, value: ids.recordingId },
        ],
      }),
    ['already_started'],
  );
  return outcome.ok ? 'started' : 'already_started';
}
