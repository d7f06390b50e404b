import { ActivityFailure, ApplicationFailure, condition, proxyActivities, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import type { MediaActivities } from '../../activities/media.js';
import { assetErrorCodeOf } from '../../src/domain/failure-types.js';
import { STATUS } from '../search-attributes.js';
import { uploadCancelledSignal, uploadFinishedSignal, type MediaIngestionInput, type MediaIngestionResult } from './contract.js';

/**
 * Transient transfer failures (DNS, network, 5xx, an empty answer) are retried with backoff for
 * about a day while the asset stays `queued`; permanent ones fail at once.
 */
function transferActivities(initialSeconds: number, heartbeatSeconds: number, taskQueue: string | undefined) {
  return proxyActivities<MediaActivities>({
    ...(taskQueue ? { taskQueue } : {}),
    startToCloseTimeout: '6 hours',
    heartbeatTimeout: `${heartbeatSeconds} seconds`,
    retry: { initialInterval: `${initialSeconds} seconds`, backoffCoefficient: 2, maximumInterval: '30 minutes', maximumAttempts: 60 },
  });
}
/** A worker that dies mid-encode stops heartbeating: another starts the encode again (same file). */
function encodeActivities(heartbeatSeconds: number, taskQueue: string | undefined) {
  return proxyActivities<MediaActivities>({
    ...(taskQueue ? { taskQueue } : {}),
    startToCloseTimeout: '6 hours',
    heartbeatTimeout: `${heartbeatSeconds} seconds`,
    retry: { initialInterval: '1 second', maximumInterval: '5 minutes', maximumAttempts: 5 },
  });
}
const db = proxyActivities<MediaActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});
// A transcription engine may take a while on long media; transient failures are retried a few times.
function transcriptionActivities(taskQueue: string | undefined) {
  return proxyActivities<MediaActivities>({
    ...(taskQueue ? { taskQueue } : {}),
    startToCloseTimeout: '2 hours',
    retry: { initialInterval: '10 seconds', maximumInterval: '10 minutes', maximumAttempts: 5 },
  });
}
// About a minute for the creating request to commit (1 + 2 + 4 + 8 + 16 + 32 s).
const created = proxyActivities<MediaActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 7 },
});

const show = (phase: string) => upsertSearchAttributes([{ key: STATUS, value: phase }]);

/**
 * A direct upload waits for its bytes: until the tus endpoint signals the last byte (or the
 * workflow finds the upload complete by itself), a cancel, or its deadline: `timeoutSeconds` after
 * creation or after the latest byte. Expired without a byte: `cancelled`; begun: `failed`
 * `upload_expired`. Null: every byte is stored, go on.
 */
async function awaitUpload(ingestionId: string): Promise<MediaIngestionResult | null> {
  let finished = false;
  let cancelled = false;
  setHandler(uploadFinishedSignal, () => void (finished = true));
  setHandler(uploadCancelledSignal, () => void (cancelled = true));
  show('waiting');
  for (;;) {
    const state = cancelled ? null : await db.uploadState(ingestionId);
    if (!state || state.phase !== 'waiting') {
      // Cancelled by the API (or closed otherwise): release the bytes and end as the row says.
      const closed = await db.closeUpload(ingestionId);
      show(closed.phase);
      return closed;
    }
    if (state.complete) {
      // False: cancelled a moment ago; the next round closes it.
      if (await db.startUploadProcessing(ingestionId)) return null;
      continue;
    }
    if (state.expired) {
      const expired = await db.expireUpload(ingestionId);
      if (expired) {
        show(expired.phase);
        return expired;
      }
      continue; // a byte arrived meanwhile: a later deadline
    }
    // The database's clock decides expiry; a second's floor keeps a skewed clock from spinning.
    await condition(() => finished || cancelled, Math.max(1000, state.deadlineMs - Date.now()));
    finished = false;
  }
}

/**
 * One media ingestion, `media-ingestion/<recordingId>`: transfer (URL media) or wait for the
 * bytes of a direct upload, encode the playback rendition, publish it. Its phase is shown as
 * `IntakeStatus` in the Temporal UI; the database row is the source of the recording's `asset` and
 * of the upload status.
 */
export async function mediaIngestionWorkflow(input: MediaIngestionInput): Promise<MediaIngestionResult> {
  const heartbeat = input.heartbeatTimeoutSeconds ?? 120;
  // Heavy work runs on the media task queue's own worker slots: it cannot hold up agent processing.
  const transfer = transferActivities(input.transferRetryInitialSeconds ?? 10, heartbeat, input.mediaTaskQueue);
  const encode = encodeActivities(heartbeat, input.mediaTaskQueue);
  const transcription = transcriptionActivities(input.mediaTaskQueue);
  try {
    await created.awaitIngestion(input.ingestionId);
  } catch {
    // The request that started this run stored nothing (it failed validation or lost a race).
    show('abandoned');
    return { phase: 'cancelled', errorCode: null };
  }
  if (input.kind === 'upload') {
    const closed = await awaitUpload(input.ingestionId);
    if (closed) return closed;
  }
  try {
    if (input.kind === 'url') {
      show('transferring');
      await transfer.transferUrlMedia(input.ingestionId);
    }
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

/**
 * The asset's stable errorCode: the failure type an activity gave (retries exhausted or permanent)
 * when it is one of the documented codes; any other failure is `processing_failed`.
 */
function errorCode(error: unknown): string {
  if (!(error instanceof ActivityFailure)) throw error;
  const type = error.cause instanceof ApplicationFailure ? error.cause.type : null;
  return assetErrorCodeOf(type);
}
