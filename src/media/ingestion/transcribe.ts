import { renditionFile, setAutomaticTranscript, storeAutomaticTranscript } from '../../db/repositories/recordings.js';
import { TranscriberError } from '../../providers/transcriber/types.js';
import { renditionRelativePath } from '../playback.js';
import { MediaStepError, type MediaPipeline } from './context.js';

/**
 * Automatic transcription once the media is ready; a supplied transcript is never touched. The
 * utterances and the `completed` status are written in one transaction.
 */
export async function transcribeMedia(
  p: MediaPipeline,
  recordingId: string,
  signal: AbortSignal,
): Promise<'completed' | 'unavailable' | 'supplied'> {
  const transcriber = p.deps.transcriber;
  if (!transcriber) return (await setAutomaticTranscript(p.pool, recordingId, 'unavailable')) ? 'unavailable' : 'supplied';
  if (!(await setAutomaticTranscript(p.pool, recordingId, 'processing'))) return 'supplied';
  const file = await renditionFile(p.pool, recordingId);
  if (!file) throw new MediaStepError('transcription_failed', 'the recording has no rendition', false);
  try {
    const utterances = await p.store.withLocalCopy(renditionRelativePath(recordingId, file), p.scratch, async (media) => {
      if (!media) throw new MediaStepError('transcription_failed', 'the rendition is missing from the media store', false);
      return transcriber.transcribe(media, { signal });
    });
    await p.pool.transaction((tx) => storeAutomaticTranscript(tx, recordingId, utterances));
    return 'completed';
  } catch (error) {
    if (error instanceof TranscriberError) throw new MediaStepError(error.code, error.message, error.retryable);
    throw error;
  }
}

/** Transcription gave up: the transcript says so (the media stays ready). */
export async function failTranscript(p: MediaPipeline, recordingId: string): Promise<void> {
  await setAutomaticTranscript(p.pool, recordingId, 'failed');
}
