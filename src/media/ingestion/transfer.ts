import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { findIngestion, setBytes } from '../../db/repositories/media-ingestions.js';
import { findMeetingBot } from '../../db/repositories/meeting-joins.js';
import { sourceUrl } from '../../db/repositories/recordings.js';
import { RecorderError } from '../../providers/recorder/types.js';
import { AssetFetchError, SafeFetcher } from '../safe-fetch.js';
import { MediaStepError, type MediaPipeline, type StepControl } from './context.js';

/**
 * A meeting recording keeps no download URL (a presigned URL is a credential): the recorder gives
 * a current one for its bot at each attempt.
 */
async function recorderMediaUrl(p: MediaPipeline, recordingId: string): Promise<string | null> {
  const botId = await findMeetingBot(p.pool, recordingId);
  const recorder = p.deps.recorder;
  if (!botId || !recorder) return null;
  try {
    const status = await recorder.botStatus(botId);
    return status.media?.kind === 'url' ? status.media.url : null;
  } catch (error) {
    if (error instanceof RecorderError)
      throw new MediaStepError(error.retryable ? 'recorder_unavailable' : 'asset_url_invalid', error.message, error.retryable);
    throw error;
  }
}

/** Downloads the recording's `assetUrl` through the SSRF-safe fetcher into the store (the asset stays `queued`). */
export async function transferUrlMedia(p: MediaPipeline, ingestionId: string, ctx: StepControl): Promise<{ bytes: number }> {
  const ingestion = await findIngestion(p.pool, ingestionId);
  if (!ingestion) throw new MediaStepError('ingestion_gone', 'the media ingestion no longer exists', false);
  const url = (await sourceUrl(p.pool, ingestion.recording_id)) ?? (await recorderMediaUrl(p, ingestion.recording_id));
  if (!url) throw new MediaStepError('asset_url_invalid', 'the recording has no assetUrl', false);
  const fetcher = new SafeFetcher({
    policy: p.deps.addressPolicy,
    allowedHosts: p.deps.fetchAllowedHosts ?? [],
    ...(p.deps.resolver ? { resolver: p.deps.resolver } : {}),
  });
  await mkdir(p.scratch, { recursive: true });
  const target = path.join(p.scratch, `${ingestionId}.download`);
  let bytes = 0;
  try {
    const media = await fetcher.open(url, ctx.signal);
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
    if (error instanceof AssetFetchError) throw new MediaStepError(error.code, error.message, error.retryable, error.message);
    throw error;
  } finally {
    await fetcher.close();
  }
  // What crosses to the encode step (another worker, maybe) is in the store.
  try {
    await p.store.put(p.incoming(ingestionId), target);
  } finally {
    await rm(target, { force: true });
  }
  await setBytes(p.pool, ingestionId, bytes);
  return { bytes };
}
