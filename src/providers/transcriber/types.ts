import type { Utterance } from '../../domain/transcript.js';
import { guardedInput } from '../../media/ffmpeg.js';
import { cpuSecondsFor, type FfmpegTools } from '../../media/ffmpeg-tools.js';
import type { FailureType } from '../../domain/failure-types.js';

/**
 * Automatic transcription of a recording's media. Media ingestion calls it once a recording without
 * a supplied transcript has its media; the meeting-join issue brings the implementations (an
 * OpenAI-compatible `audio/transcriptions` adapter, an offline engine where one can be installed).
 */
export interface Transcriber {
  /** Stored as the producer; shown in logs. */
  readonly name: string;
  /** Utterances in time order, with speakers (0 when the engine does not tell speakers apart). */
  transcribe(mediaFile: string, options?: { signal?: AbortSignal }): Promise<Utterance[]>;
}

/** A transcription failure; `retryable` ones are tried again by Temporal. */
export class TranscriberError extends Error {
  override name = 'TranscriberError';
  constructor(
    message: string,
    readonly code: FailureType,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

/**
 * The media's speech as mono 16 kHz audio for an engine: compact MP3 (32 kb/s) to send, or raw
 * signed 16-bit PCM to decode. Media ffmpeg cannot read is a permanent `transcription_failed`.
 */
export async function extractSpeech(
  ffmpeg: FfmpegTools,
  mediaFile: string,
  output: string,
  format: 'mp3' | 's16le',
  signal?: AbortSignal,
): Promise<void> {
  const codec = format === 'mp3' ? ['-b:a', '32k', '-f', 'mp3'] : ['-f', 's16le'];
  const wallSeconds = ffmpeg.settings.timeLimitSeconds;
  let failure: string;
  try {
    const result = await ffmpeg.run(
      'ffmpeg',
      ['-nostdin', '-hide_banner', '-loglevel', 'error', '-y', ...guardedInput(), '-vn', '-ac', '1', '-ar', '16000', ...codec, output],
      {
        stdinFile: mediaFile,
        outputFile: output,
        limits: { wallSeconds, cpuSeconds: cpuSecondsFor(wallSeconds) },
        signal,
      },
    );
    if (result.code === 0) return;
    failure = result.limit ? `FFmpeg's ${result.limit} limit stopped it` : (result.stderr.trim().split('\n').at(-1) ?? '');
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    failure = (error as Error).message.split('\n')[0] ?? '';
  }
  throw new TranscriberError(`the media could not be prepared for transcription: ${failure}`, 'transcription_failed', false);
}
