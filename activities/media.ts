import { ApplicationFailure, Context } from '@temporalio/activity';
import {
  MediaStepError,
  mediaPipeline,
  type MediaPipeline,
  type MediaPipelineDeps,
  type StepControl,
} from '../src/media/ingestion/context.js';
import { encodeMedia } from '../src/media/ingestion/encode.js';
import {
  awaitIngestion,
  closeUpload,
  expireUpload,
  failMedia,
  finalizeMedia,
  startUploadProcessing,
  uploadState,
} from '../src/media/ingestion/state.js';
import { clearStepFailure, noteStepFailure } from '../src/media/ingestion/retry.js';
import { failTranscript, transcribeMedia } from '../src/media/ingestion/transcribe.js';
import { transferUrlMedia } from '../src/media/ingestion/transfer.js';
import type { MediaIngestionResult, Rendition, UploadState } from '../workflows/media-ingestion/contract.js';
import { attemptOf } from './attempt.js';

export type MediaActivityDeps = MediaPipelineDeps;

/** A permanent failure carries the asset's errorCode as its type; a transient one is retried by Temporal. */
async function step<T>(run: Promise<T>): Promise<T> {
  try {
    return await run;
  } catch (error) {
    if (error instanceof MediaStepError)
      throw ApplicationFailure.create({ type: error.code, message: error.message, nonRetryable: !error.retryable });
    throw error;
  }
}

/**
 * A heavy step of an ingestion (transfer, encode; the others only touch the database): a failure
 * Temporal will retry is shown on the ingestion's status before it is rethrown, a success clears it.
 */
async function watched<T>(p: MediaPipeline, ingestionId: string, run: () => Promise<T>): Promise<T> {
  const at = attemptOf();
  try {
    const result = await run();
    await clearStepFailure(p.pool, ingestionId, at);
    return result;
  } catch (error) {
    if (!Context.current().cancellationSignal.aborted) await noteStepFailure(p.pool, ingestionId, error, at);
    throw error;
  }
}

function control(): StepControl {
  const ctx = Context.current();
  return { signal: ctx.cancellationSignal, heartbeat: (details) => ctx.heartbeat(details) };
}

/**
 * The media-ingestion workflow's activities: adapters over the pipeline in src/media/ingestion.
 * Their names, arguments and results are what stored workflow histories hold.
 */
export function createMediaActivities(deps: MediaActivityDeps) {
  const p = mediaPipeline(deps);
  return {
    async awaitIngestion(ingestionId: string): Promise<void> {
      return step(awaitIngestion(p, ingestionId));
    },
    async transferUrlMedia(ingestionId: string): Promise<{ bytes: number }> {
      return step(watched(p, ingestionId, () => transferUrlMedia(p, ingestionId, control())));
    },
    async uploadState(ingestionId: string): Promise<UploadState> {
      return step(uploadState(p, ingestionId));
    },
    async startUploadProcessing(ingestionId: string): Promise<boolean> {
      return step(startUploadProcessing(p, ingestionId));
    },
    async expireUpload(ingestionId: string): Promise<MediaIngestionResult | null> {
      return step(expireUpload(p, ingestionId));
    },
    async closeUpload(ingestionId: string): Promise<MediaIngestionResult> {
      return step(closeUpload(p, ingestionId));
    },
    async encodeMedia(ingestionId: string, recordingId: string): Promise<Rendition> {
      return step(watched(p, ingestionId, () => encodeMedia(p, ingestionId, recordingId, control())));
    },
    async finalizeMedia(ingestionId: string, recordingId: string, rendition: Rendition): Promise<void> {
      return step(finalizeMedia(p, ingestionId, recordingId, rendition));
    },
    async transcribeMedia(recordingId: string): Promise<'completed' | 'unavailable' | 'supplied'> {
      return step(transcribeMedia(p, recordingId, Context.current().cancellationSignal));
    },
    async failTranscript(recordingId: string): Promise<void> {
      return step(failTranscript(p, recordingId));
    },
    async failMedia(ingestionId: string, errorCode: string): Promise<void> {
      return step(failMedia(p, ingestionId, errorCode));
    },
  };
}

export type MediaActivities = ReturnType<typeof createMediaActivities>;
