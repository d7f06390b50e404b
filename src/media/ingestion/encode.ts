import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { findIngestion, movePhase, setProgress } from '../../db/repositories/media-ingestions.js';
import type { Rendition } from '../../../workflows/media-ingestion/contract.js';
import { encodeRendition, MediaProcessingError, probeMedia, renditionFor } from '../ffmpeg.js';
import { FfmpegUnavailableError } from '../ffmpeg-tools.js';
import { renditionRelativePath } from '../playback.js';
import { MediaStepError, type MediaPipeline, type StepControl } from './context.js';

/**
 * Probes and encodes the playback rendition, reporting `encodeProgress` through the database and
 * heartbeats. The rendition's name is the ingestion's id: a restart after a crash rewrites the same
 * file, so there is one rendition whatever happens.
 */
export async function encodeMedia(p: MediaPipeline, ingestionId: string, recordingId: string, ctx: StepControl): Promise<Rendition> {
  const ingestion = await findIngestion(p.pool, ingestionId);
  if (!ingestion) throw new MediaStepError('ingestion_gone', 'the media ingestion no longer exists', false);
  await p.pool.transaction((tx) => movePhase(tx, ingestionId, { phase: 'encoding', asset: 'processing', progress: 0 }));
  return p.withSource(ingestion, async (input) => {
    if (!input)
      throw new MediaStepError(
        ingestion.kind === 'upload' ? 'upload_failed' : 'processing_failed',
        'the media to encode is missing',
        false,
      );
    await mkdir(p.scratch, { recursive: true });
    try {
      const probe = await probeMedia(p.ffmpeg, input, ctx.signal);
      const file = `${ingestionId}.${renditionFor(probe).extension}`;
      const partial = path.join(p.scratch, `${file}.partial`);
      try {
        const rendition = await encodeRendition(p.ffmpeg, input, partial, probe, {
          signal: ctx.signal,
          onProgress: (percent) => {
            ctx.heartbeat({ percent });
            // Progress is advisory: a failed write must not fail (or crash) the encode.
            setProgress(p.pool, ingestionId, percent).catch(() => undefined);
          },
        });
        await p.store.put(renditionRelativePath(recordingId, file), partial, rendition.contentType);
        return { file, contentType: rendition.contentType, durationSec: probe.durationSec };
      } finally {
        await rm(partial, { force: true });
      }
    } catch (error) {
      if (error instanceof MediaProcessingError) throw new MediaStepError('processing_failed', error.message, false);
      // A worker without FFmpeg: retried (an operator can install it, another worker can take it).
      if (error instanceof FfmpegUnavailableError) throw new MediaStepError('ffmpeg_unavailable', error.message, true);
      throw error;
    }
  });
}
