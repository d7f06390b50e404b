import { ApplicationFailure, Context } from '@temporalio/activity';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { DatabasePool } from 'slonik';
import { sql } from 'slonik';
import {
  findIngestion,
  movePhase,
  publishRendition,
  renditionFile,
  setAutomaticTranscript,
  setBytes,
  setProgress,
  sourceUrl,
  uploadTiming,
  type IngestionRow,
} from '../src/db/repositories/media-ingestions.js';
import { insertUtterances } from '../src/db/repositories/recordings.js';
import { TranscriberError, type Transcriber } from '../src/providers/transcriber/types.js';
import { RecorderError, type Recorder } from '../src/providers/recorder/types.js';
import { findMeetingBot } from '../src/db/repositories/meeting-joins.js';
import { encodeRendition, MediaProcessingError, probeMedia, renditionFor } from '../src/media/ffmpeg.js';
import { FfmpegTools, FfmpegUnavailableError } from '../src/media/ffmpeg-tools.js';
import { renditionRelativePath } from '../src/media/playback.js';
import { AssetFetchError, SafeFetcher, type AddressPolicy, type Resolver } from '../src/media/safe-fetch.js';
import { FileUploadStore, uploadsDirectory, type UploadStore } from '../src/media/upload-store.js';
import { DirectoryMediaStore, type MediaStore } from '../src/media/media-store.js';
import type { MediaIngestionResult, Rendition, UploadState } from '../workflows/media-ingestion/contract.js';
import { FailureType } from '../workflows/failure-types.js';

export interface MediaActivityDeps {
  pool: DatabasePool;
  /** STORAGE_DIR, absolute. */
  mediaDir: string;
  /** Where direct uploads' bytes are (the tus endpoint's datastore); default: files under `mediaDir`. */
  uploadStore?: UploadStore;
  /** Where URL downloads and renditions are kept; default: under `mediaDir`. Scratch files go to `mediaDir/scratch`. */
  mediaStore?: MediaStore;
  /** Production: PUBLIC_ADDRESSES. Tests allow their own loopback server. */
  addressPolicy: AddressPolicy;
  /** MEDIA_FETCH_ALLOWED_HOSTS: host names whose addresses are not checked. */
  fetchAllowedHosts?: readonly string[];
  resolver?: Resolver;
  /** None configured: recordings without a supplied transcript get status `unavailable`. */
  transcriber?: Transcriber | undefined;
  /** The FFmpeg that probes and encodes, with its limits; default: the pinned build under `.tools`. */
  ffmpeg?: FfmpegTools;
  /** The meeting recorder: a meeting recording's download URL is asked of it when the transfer runs, never stored. */
  recorder?: Recorder;
}

/** A permanent failure carries the asset's errorCode as its type; a transient one is retried by Temporal. */
function failure(code: FailureType, message: string, retryable: boolean): ApplicationFailure {
  return ApplicationFailure.create({ type: code, message, nonRetryable: !retryable });
}

/** How an ingestion that ended reads to the workflow. */
function outcome(row: Pick<IngestionRow, 'phase' | 'error_code'>): MediaIngestionResult {
  if (row.phase === 'ready' || row.phase === 'failed') return { phase: row.phase, errorCode: row.error_code };
  return { phase: 'cancelled', errorCode: null };
}

export function createMediaActivities(deps: MediaActivityDeps) {
  const store = deps.mediaStore ?? new DirectoryMediaStore(deps.mediaDir);
  const uploads = deps.uploadStore ?? new FileUploadStore(uploadsDirectory(deps.mediaDir));
  const ffmpeg = deps.ffmpeg ?? new FfmpegTools();
  /** This worker's own files, each made and deleted by one activity call. */
  const scratch = path.join(deps.mediaDir, 'scratch');
  const incoming = (ingestionId: string) => `incoming/${ingestionId}`;
  /** Runs `use` with a local copy of the bytes to encode (the URL transfer's download, or the direct upload). */
  const withSource = async <T>(ingestion: IngestionRow, use: (file: string | null) => Promise<T>): Promise<T> =>
    ingestion.kind === 'url' ? store.withLocalCopy(incoming(ingestion.id), scratch, use) : use(await uploads.localFile(ingestion.id));
  const release = async (ingestionId: string) => {
    await store.delete(incoming(ingestionId));
    await uploads.remove(ingestionId);
  };

  /**
   * A meeting recording keeps no download URL (a presigned URL is a credential): the recorder gives
   * a current one for its bot at each attempt.
   */
  const recorderMediaUrl = async (recordingId: string): Promise<string | null> => {
    const botId = await findMeetingBot(deps.pool, recordingId);
    if (!botId || !deps.recorder) return null;
    try {
      const status = await deps.recorder.botStatus(botId);
      return status.media?.kind === 'url' ? status.media.url : null;
    } catch (error) {
      if (error instanceof RecorderError)
        throw failure(error.retryable ? FailureType.recorderUnavailable : FailureType.assetUrlInvalid, error.message, error.retryable);
      throw error;
    }
  };

  return {
    /**
     * The workflow starts before the request that created the recording commits: its rows appear
     * within moments, or never (the request failed). Missing: retried a few times by Temporal.
     */
    async awaitIngestion(ingestionId: string): Promise<void> {
      if (!(await findIngestion(deps.pool, ingestionId)))
        throw failure(FailureType.ingestionNotFound, 'the media ingestion is not (yet) stored', true);
    },

    /** Downloads the recording's `assetUrl` through the SSRF-safe fetcher (the asset stays `queued`). */
    async transferUrlMedia(ingestionId: string): Promise<{ bytes: number }> {
      const ingestion = await findIngestion(deps.pool, ingestionId);
      if (!ingestion) throw failure(FailureType.ingestionGone, 'the media ingestion no longer exists', false);
      const url = (await sourceUrl(deps.pool, ingestion.recording_id)) ?? (await recorderMediaUrl(ingestion.recording_id));
      if (!url) throw failure(FailureType.assetUrlInvalid, 'the recording has no assetUrl', false);
      const ctx = Context.current();
      const fetcher = new SafeFetcher({
        policy: deps.addressPolicy,
        allowedHosts: deps.fetchAllowedHosts ?? [],
        ...(deps.resolver ? { resolver: deps.resolver } : {}),
      });
      await mkdir(scratch, { recursive: true });
      const target = path.join(scratch, `${ingestionId}.download`);
      let bytes = 0;
      try {
        const media = await fetcher.open(url, ctx.cancellationSignal);
        const count = new Transform({
          transform(chunk: Buffer, _e, done) {
            bytes += chunk.length;
            ctx.heartbeat({ bytes });
            done(null, chunk);
          },
        });
        await pipeline(media.body, count, createWriteStream(target));
      } catch (error) {
        await rm(target, { force: true });
        if (error instanceof AssetFetchError) throw failure(error.code, error.message, error.retryable);
        throw error;
      } finally {
        await fetcher.close();
      }
      // What crosses to the encode activity (another worker, maybe) is in the store.
      try {
        await store.put(incoming(ingestionId), target);
      } finally {
        await rm(target, { force: true });
      }
      await setBytes(deps.pool, ingestionId, bytes);
      return { bytes };
    },

    /** A direct upload's phase, whether every byte is stored, and its deadline. */
    async uploadState(ingestionId: string): Promise<UploadState> {
      const timing = await uploadTiming(deps.pool, ingestionId);
      if (!timing) throw failure(FailureType.ingestionGone, 'the upload no longer exists', false);
      const progress = await uploads.progress(ingestionId);
      const complete = progress !== null && progress.size > 0 && progress.offset === progress.size;
      return { phase: timing.phase, complete, deadlineMs: timing.deadline_ms, expired: timing.expired };
    },

    /** Every byte is in: `waiting` to `encoding` (from now on a cancel is 409). False: it was cancelled first. */
    async startUploadProcessing(ingestionId: string): Promise<boolean> {
      const progress = await uploads.progress(ingestionId);
      return deps.pool.transaction(async (tx) => {
        if (progress) await setBytes(tx, ingestionId, progress.offset);
        if (await movePhase(tx, ingestionId, { phase: 'encoding', asset: 'processing', progress: 0 }, 'waiting')) return true;
        // A retry of a call that already moved it.
        return (await findIngestion(tx, ingestionId))?.phase === 'encoding';
      });
    },

    /**
     * The deadline passed: without a byte the upload is `cancelled`, begun but unfinished it is
     * `failed` with `upload_expired`. Null: not expired after all (a byte arrived meanwhile).
     */
    async expireUpload(ingestionId: string): Promise<MediaIngestionResult | null> {
      const ended = await deps.pool.transaction(async (tx) => {
        const row = await findIngestion(tx, ingestionId);
        if (!row) throw failure(FailureType.ingestionGone, 'the upload no longer exists', false);
        if (row.phase !== 'waiting') return outcome(row);
        const timing = await uploadTiming(tx, ingestionId);
        if (!timing?.expired) return null;
        if (timing.began) await movePhase(tx, ingestionId, { phase: 'failed', asset: 'failed', errorCode: 'upload_expired' }, 'waiting');
        else await movePhase(tx, ingestionId, { phase: 'cancelled', asset: 'cancelled' }, 'waiting');
        return outcome((await findIngestion(tx, ingestionId)) ?? row);
      });
      if (ended) await release(ingestionId);
      return ended;
    },

    /** A cancelled (or otherwise closed) upload: still waiting means cancelled now; its bytes are deleted. */
    async closeUpload(ingestionId: string): Promise<MediaIngestionResult> {
      const row = await deps.pool.transaction(async (tx) => {
        await movePhase(tx, ingestionId, { phase: 'cancelled', asset: 'cancelled' }, 'waiting');
        return findIngestion(tx, ingestionId);
      });
      await release(ingestionId);
      return row ? outcome(row) : { phase: 'cancelled', errorCode: null };
    },

    /**
     * Probes and encodes the playback rendition, reporting `encodeProgress` through the database
     * and heartbeats. The rendition's name is the ingestion's id: a restart after a crash rewrites
     * the same file, so there is one rendition whatever happens.
     */
    async encodeMedia(ingestionId: string, recordingId: string): Promise<Rendition> {
      const ingestion = await findIngestion(deps.pool, ingestionId);
      if (!ingestion) throw failure(FailureType.ingestionGone, 'the media ingestion no longer exists', false);
      await deps.pool.transaction((tx) => movePhase(tx, ingestionId, { phase: 'encoding', asset: 'processing', progress: 0 }));
      const ctx = Context.current();
      return withSource(ingestion, async (input) => {
        if (!input)
          throw failure(
            ingestion.kind === 'upload' ? FailureType.uploadFailed : FailureType.processingFailed,
            'the media to encode is missing',
            false,
          );
        await mkdir(scratch, { recursive: true });
        try {
          const probe = await probeMedia(ffmpeg, input, ctx.cancellationSignal);
          const file = `${ingestionId}.${renditionFor(probe).extension}`;
          const partial = path.join(scratch, `${file}.partial`);
          try {
            const rendition = await encodeRendition(ffmpeg, input, partial, probe, {
              signal: ctx.cancellationSignal,
              onProgress: (percent) => {
                ctx.heartbeat({ percent });
                // Progress is advisory: a failed write must not fail (or crash) the encode.
                setProgress(deps.pool, ingestionId, percent).catch(() => undefined);
              },
            });
            await store.put(renditionRelativePath(recordingId, file), partial, rendition.contentType);
            return { file, contentType: rendition.contentType, durationSec: probe.durationSec };
          } finally {
            await rm(partial, { force: true });
          }
        } catch (error) {
          if (error instanceof MediaProcessingError) throw failure(FailureType.processingFailed, error.message, false);
          // A worker without FFmpeg: retried (an operator can install it, another worker can take it).
          if (error instanceof FfmpegUnavailableError) throw failure(FailureType.ffmpegUnavailable, error.message, true);
          throw error;
        }
      });
    },

    /** Publishes the rendition: the recording's asset is `completed` and gets a playback URL. */
    async finalizeMedia(ingestionId: string, recordingId: string, rendition: Rendition): Promise<void> {
      await deps.pool.transaction(async (tx) => {
        await movePhase(tx, ingestionId, { phase: 'finalizing', asset: 'processing' });
        await publishRendition(tx, ingestionId, { recordingId, ...rendition });
      });
      await release(ingestionId);
    },

    /**
     * Automatic transcription once the media is ready; a supplied transcript is never touched. The
     * utterances and the `completed` status are written in one transaction.
     */
    async transcribeMedia(recordingId: string): Promise<'completed' | 'unavailable' | 'supplied'> {
      if (!deps.transcriber) return (await setAutomaticTranscript(deps.pool, recordingId, 'unavailable')) ? 'unavailable' : 'supplied';
      if (!(await setAutomaticTranscript(deps.pool, recordingId, 'processing'))) return 'supplied';
      const file = await renditionFile(deps.pool, recordingId);
      if (!file) throw failure(FailureType.transcriptionFailed, 'the recording has no rendition', false);
      try {
        const transcriber = deps.transcriber;
        const utterances = await store.withLocalCopy(renditionRelativePath(recordingId, file), scratch, async (media) => {
          if (!media) throw failure(FailureType.transcriptionFailed, 'the rendition is missing from the media store', false);
          return transcriber.transcribe(media, { signal: Context.current().cancellationSignal });
        });
        await deps.pool.transaction(async (tx) => {
          await tx.query(sql.unsafe`DELETE FROM transcript_utterances WHERE recording_id = ${recordingId}`);
          await insertUtterances(tx, recordingId, utterances);
          await setAutomaticTranscript(tx, recordingId, 'completed');
        });
        return 'completed';
      } catch (error) {
        if (error instanceof TranscriberError) throw failure(error.code, error.message, error.retryable);
        throw error;
      }
    },

    /** Transcription gave up: the transcript says so (the media stays ready). */
    async failTranscript(recordingId: string): Promise<void> {
      await setAutomaticTranscript(deps.pool, recordingId, 'failed');
    },

    async failMedia(ingestionId: string, errorCode: string): Promise<void> {
      await deps.pool.transaction((tx) => movePhase(tx, ingestionId, { phase: 'failed', asset: 'failed', errorCode }));
      await release(ingestionId);
    },
  };
}

export type MediaActivities = ReturnType<typeof createMediaActivities>;
