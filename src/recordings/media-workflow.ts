import { mediaIngestionStart, type MediaIngestionIds } from '../domain/media-ingestion-start.js';
import type { TemporalGateway } from '../temporal/gateway.js';
import { mediaIngestionWorkflowId, uploadCancelledSignal, uploadFinishedSignal } from '../../workflows/media-ingestion/contract.js';
import type { MediaWorkflowSettingsInput } from '../../workflows/media-reconciler/contract.js';

/**
 * The gateway of `media-ingestion/<recordingId>`: every call the API, the CLI and the activities
 * make to it. Temporal unreachable (or past the deadline) is a 503 `temporal_unavailable`.
 */

/** Starts the ingestion's workflow: `already_started` when a run of the recording is open. */
export async function startMediaIngestionWorkflow(
  temporal: TemporalGateway,
  settings: MediaWorkflowSettingsInput,
  ids: MediaIngestionIds,
): Promise<'started' | 'already_started'> {
  const { workflowType, ...options } = mediaIngestionStart(ids, settings);
  const outcome = await temporal.call(
    'request',
    (client) => client.workflow.start(workflowType, { ...options, taskQueue: settings.taskQueue }),
    ['already_started'],
  );
  return outcome.ok ? 'started' : 'already_started';
}

/** Tells the run that every byte of its upload is stored; false: no run is open. */
export async function tellUploadFinished(temporal: TemporalGateway, recordingId: string): Promise<boolean> {
  const outcome = await temporal.call(
    'notify',
    (client) => client.workflow.getHandle(mediaIngestionWorkflowId(recordingId)).signal(uploadFinishedSignal),
    ['not_found'],
  );
  return outcome.ok;
}

/** Tells the run that its upload was cancelled; false: no run is open. */
export async function tellUploadCancelled(temporal: TemporalGateway, recordingId: string): Promise<boolean> {
  const outcome = await temporal.call(
    'notify',
    (client) => client.workflow.getHandle(mediaIngestionWorkflowId(recordingId)).signal(uploadCancelledSignal),
    ['not_found'],
  );
  return outcome.ok;
}

/** Terminates the open run (`reason` is shown in its history); false: none was open. */
export async function terminateMediaIngestion(temporal: TemporalGateway, recordingId: string, reason: string): Promise<boolean> {
  const outcome = await temporal.call(
    'request',
    (client) => client.workflow.getHandle(mediaIngestionWorkflowId(recordingId)).terminate(reason),
    ['not_found'],
  );
  return outcome.ok;
}

/** Whether the recording's latest run is running. */
export async function mediaIngestionRunning(temporal: TemporalGateway, recordingId: string): Promise<boolean> {
  const outcome = await temporal.call('request', (client) => client.workflow.getHandle(mediaIngestionWorkflowId(recordingId)).describe(), [
    'not_found',
  ]);
  return outcome.ok && outcome.value.status.name === 'RUNNING';
}
