import type { FailureType } from '../../domain/failure-types.js';
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { DatabasePool } from 'slonik';
import type { IngestionRow } from '../../db/repositories/media-ingestions.js';
import type { Recorder } from '../../providers/recorder/types.js';
import type { Transcriber } from '../../providers/transcriber/types.js';
import { FfmpegTools } from '../ffmpeg-tools.js';
import { DirectoryMediaStore, type MediaStore } from '../media-store.js';
import type { AddressPolicy, Resolver } from '../safe-fetch.js';
import { FileUploadStore, uploadsDirectory, type UploadStore } from '../upload-store.js';

export interface MediaPipelineDeps {
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

/**
 * A step that failed for good or for now: `code` is the asset's errorCode (the workflow fails the
 * ingestion with it); a retryable one is tried again by the runner (Temporal's retry policy).
 */
export class MediaStepError extends Error {
  constructor(
    readonly code: FailureType,
    message: string,
    readonly retryable: boolean,
    /** A reason of a known safe shape (`HTTP 503`, `DNS: ENOTFOUND`) the status may show beside the code. */
    readonly detail: string | null = null,
  ) {
    super(message);
    this.name = 'MediaStepError';
  }
}

/** What a long step reports to, and hears from, whatever runs it (a Temporal activity in production). */
export interface StepControl {
  signal: AbortSignal;
  heartbeat(details: unknown): void;
}

/** The pipeline's dependencies with their defaults, and the files one ingestion uses. */
export interface MediaPipeline {
  deps: MediaPipelineDeps;
  pool: DatabasePool;
  store: MediaStore;
  uploads: UploadStore;
  ffmpeg: FfmpegTools;
  /** This worker's own files, each made and deleted by one step. */
  scratch: string;
  /** Where a URL transfer's download waits in the store for the encode step (another worker, maybe). */
  incoming(ingestionId: string): string;
  /** Runs `use` with a local copy of the bytes to encode (the URL transfer's download, or the direct upload). */
  withSource<T>(ingestion: IngestionRow, use: (file: string | null) => Promise<T>): Promise<T>;
  /** Deletes an ended ingestion's source bytes. */
  release(ingestionId: string): Promise<void>;
  /** Deletes the ingestion's scratch files (a download, a partial rendition) a killed step left: how many. */
  dropScratch(ingestionId: string): Promise<number>;
}

export function mediaPipeline(deps: MediaPipelineDeps): MediaPipeline {
  const store = deps.mediaStore ?? new DirectoryMediaStore(deps.mediaDir);
  const uploads = deps.uploadStore ?? new FileUploadStore(uploadsDirectory(deps.mediaDir));
  const scratch = path.join(deps.mediaDir, 'scratch');
  const incoming = (ingestionId: string) => `incoming/${ingestionId}`;
  return {
    deps,
    pool: deps.pool,
    store,
    uploads,
    ffmpeg: deps.ffmpeg ?? new FfmpegTools(),
    scratch,
    incoming,
    withSource: async (ingestion, use) =>
      ingestion.kind === 'url' ? store.withLocalCopy(incoming(ingestion.id), scratch, use) : use(await uploads.localFile(ingestion.id)),
    release: async (ingestionId) => {
      await store.delete(incoming(ingestionId));
      await uploads.remove(ingestionId);
    },
    dropScratch: async (ingestionId) => {
      const names = await readdir(scratch).catch(() => [] as string[]);
      const left = names.filter((name) => name.startsWith(`${ingestionId}.`));
      for (const name of left) await rm(path.join(scratch, name), { force: true });
      return left.length;
    },
  };
}
