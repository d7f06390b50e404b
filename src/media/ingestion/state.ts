import {
  findIngestion,
  movePhase,
  publishRendition,
  setBytes,
  uploadTiming,
  type IngestionRow,
} from '../../db/repositories/media-ingestions.js';
import type { MediaIngestionResult, Rendition, UploadState } from '../../../workflows/media-ingestion/contract.js';
import { MediaStepError, type MediaPipeline } from './context.js';

/*
 * The ingestion's bookkeeping steps: its phase (and the recording's asset with it) moves in one
 * transaction each; the bytes an ended ingestion leaves are deleted after the move committed.
 */

/** How an ingestion that ended reads to the workflow. */
function outcome(row: Pick<IngestionRow, 'phase' | 'error_code'>): MediaIngestionResult {
  if (row.phase === 'ready' || row.phase === 'failed') return { phase: row.phase, errorCode: row.error_code };
  return { phase: 'cancelled', errorCode: null };
}

/**
 * The workflow starts before the request that created the recording commits: its rows appear
 * within moments, or never (the request failed). Missing: a retryable failure.
 */
export async function awaitIngestion(p: MediaPipeline, ingestionId: string): Promise<void> {
  if (!(await findIngestion(p.pool, ingestionId)))
    throw new MediaStepError('ingestion_not_found', 'the media ingestion is not (yet) stored', true);
}

/** A direct upload's phase, whether every byte is stored, and its deadline. */
export async function uploadState(p: MediaPipeline, ingestionId: string): Promise<UploadState> {
  const timing = await uploadTiming(p.pool, ingestionId);
  if (!timing) throw new MediaStepError('ingestion_gone', 'the upload no longer exists', false);
  const progress = await p.uploads.progress(ingestionId);
  const complete = progress !== null && progress.size > 0 && progress.offset === progress.size;
  return { phase: timing.phase, complete, deadlineMs: timing.deadline_ms, expired: timing.expired };
}

/** Every byte is in: `waiting` to `encoding` (from now on a cancel is 409). False: it was cancelled first. */
export async function startUploadProcessing(p: MediaPipeline, ingestionId: string): Promise<boolean> {
  const progress = await p.uploads.progress(ingestionId);
  return p.pool.transaction(async (tx) => {
    if (progress) await setBytes(tx, ingestionId, progress.offset);
    if (await movePhase(tx, ingestionId, { phase: 'encoding', asset: 'processing', progress: 0 }, 'waiting')) return true;
    // A retry of a call that already moved it.
    return (await findIngestion(tx, ingestionId))?.phase === 'encoding';
  });
}

/**
 * The deadline passed: without a byte the upload is `cancelled`, begun but unfinished it is
 * `failed` with `upload_expired`. Null: not expired after all (a byte arrived meanwhile).
 */
export async function expireUpload(p: MediaPipeline, ingestionId: string): Promise<MediaIngestionResult | null> {
  const ended = await p.pool.transaction(async (tx) => {
    const row = await findIngestion(tx, ingestionId);
    if (!row) throw new MediaStepError('ingestion_gone', 'the upload no longer exists', false);
    if (row.phase !== 'waiting') return outcome(row);
    const timing = await uploadTiming(tx, ingestionId);
    if (!timing?.expired) return null;
    if (timing.began) await movePhase(tx, ingestionId, { phase: 'failed', asset: 'failed', errorCode: 'upload_expired' }, 'waiting');
    else await movePhase(tx, ingestionId, { phase: 'cancelled', asset: 'cancelled' }, 'waiting');
    return outcome((await findIngestion(tx, ingestionId)) ?? row);
  });
  if (ended) await p.release(ingestionId);
  return ended;
}

/** A cancelled (or otherwise closed) upload: still waiting means cancelled now; its bytes are deleted. */
export async function closeUpload(p: MediaPipeline, ingestionId: string): Promise<MediaIngestionResult> {
  const row = await p.pool.transaction(async (tx) => {
    await movePhase(tx, ingestionId, { phase: 'cancelled', asset: 'cancelled' }, 'waiting');
    return findIngestion(tx, ingestionId);
  });
  await p.release(ingestionId);
  return row ? outcome(row) : { phase: 'cancelled', errorCode: null };
}

/** Publishes the rendition: the recording's asset is `completed` and gets a playback URL. */
export async function finalizeMedia(p: MediaPipeline, ingestionId: string, recordingId: string, rendition: Rendition): Promise<void> {
  await p.pool.transaction(async (tx) => {
    await movePhase(tx, ingestionId, { phase: 'finalizing', asset: 'processing' });
    await publishRendition(tx, ingestionId, { recordingId, ...rendition });
  });
  await p.release(ingestionId);
}

export async function failMedia(p: MediaPipeline, ingestionId: string, errorCode: string): Promise<void> {
  await p.pool.transaction((tx) => movePhase(tx, ingestionId, { phase: 'failed', asset: 'failed', errorCode }));
  await p.release(ingestionId);
}
