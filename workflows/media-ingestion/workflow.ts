import { ActivityFailure, ApplicationFailure, proxyActivities, upsertSearchAttributes } from '@temporalio/workflow';
import type { MediaActivities } from '../../activities/media.js';
import { STATUS } from '../search-attributes.js';
import type { MediaIngestionInput, MediaIngestionResult } from './contract.js';

/**
 * Transient transfer failures (DNS, network, 5xx, an empty answer) are retried with backoff for
 * about a day while the asset stays `queued`; permanent ones fail at once.
 */
function transferActivities(initialSeconds: number, heartbeatSeconds: number) {
  return proxyActivities<MediaActivities>({
    startToCloseTimeout: '6 hours',
    heartbeatTimeout: `${heartbeatSeconds} seconds`,
    retry: { initialInterval: `${initialSeconds} seconds`, backoffCoefficient: 2, maximumInterval: '30 minutes', maximumAttempts: 60 },
  });
}
/** A worker that dies mid-encode stops heartbeating: another starts the encode again (same file). */
function encodeActivities(heartbeatSeconds: number) {
  return proxyActivities<MediaActivities>({
    startToCloseTimeout: '6 hours',
    heartbeatTimeout: `${heartbeatSeconds} seconds`,
    retry: { initialInterval: '1 second', maximumInterval: '5 minutes', maximumAttempts: 5 },
  });
}
const db = proxyActivities<MediaActivities>({ startToCloseTimeout: '1 minute', retry: { initialInterval: '1 second', maximumInterval: '1 minute' } });
// A transcription engine may take a while on long media; transient failures are retried a few times.
const transcription = proxyActivities<MediaActivities>({
  startToCloseTimeout: '2 hours', retry: { initialInterval: '10 seconds', maximumInterval: '10 minutes', maximumAttempts: 5 },
});
// About a minute for the creating request to commit (1 + 2 + 4 + 8 + 16 + 32 s).
const created = proxyActivities<MediaActivities>({ startToCloseTimeout: '30 seconds', retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 7 } });

/**
 * One media ingestion, `media-ingestion/<recordingId>`: transfer (URL media), encode the playback
 * rendition, publish it. Its phase is shown as `IntakeStatus` in the Temporal UI; the database row
 * is the source of the recording's `asset` and of the upload status.
 */
export async function mediaIngestionWorkflow(input: MediaIngestionInput): Promise<MediaIngestionResult> {
  const show = (phase: string) => upsertSearchAttributes([{ key: STATUS, value: phase }]);
  const heartbeat = input.heartbeatTimeoutSeconds ?? 120;
  const transfer = transferActivities(input.transferRetryInitialSeconds ?? 10, heartbeat);
  const encode = encodeActivities(heartbeat);
  try {
    await created.awaitIngestion(input.ingestionId);
  } catch {
    // The request that started this run stored nothing (it failed validation or lost a race).
    show('abandoned');
    return { phase: 'cancelled', errorCode: null };
  }
  try {
    show('transferring');
    await transfer.transferUrlMedia(input.ingestionId);
    show('encoding');
    const rendition = await encode.encodeMedia(input.ingestionId, input.recordingId);
    show('finalizing');
    await db.finalizeMedia(input.ingestionId, input.recordingId, rendition);
    show('ready');
  } catch (error) {
    const code = errorCode(error);
    await db.failMedia(input.ingestionId, code);
    show('failed');
    return { phase: 'failed', errorCode: code };
  }
  // The media is ready whatever transcription does; its own status tells how that went.
  try {
    await transcription.transcribeMedia(input.recordingId);
  } catch {
    await db.failTranscript(input.recordingId);
  }
  return { phase: 'ready', errorCode: null };
}

/** The asset's stable errorCode: the failure type an activity gave (retries exhausted or permanent). */
function errorCode(error: unknown): string {
  if (error instanceof ActivityFailure && error.cause instanceof ApplicationFailure && error.cause.type) return error.cause.type;
  if (error instanceof ActivityFailure) return 'processing_failed';
  throw error;
}
