import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Utterance } from '../../domain/transcript.js';
import { FFMPEG_PATH } from '../../media/ffmpeg.js';

const exec = promisify(execFile);

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
  constructor(message: string, readonly code: string, readonly retryable: boolean) {
    super(message);
  }
}

/**
 * The media's speech as mono 16 kHz audio for an engine: compact MP3 (32 kb/s) to send, or raw
 * signed 16-bit PCM to decode. Media ffmpeg cannot read is a permanent `transcription_failed`.
 */
export async function extractSpeech(mediaFile: string, output: string, format: 'mp3' | 's16le', signal?: AbortSignal): Promise<void> {
  const codec = format === 'mp3' ? ['-b:a', '32k', '-f', 'mp3'] : ['-f', 's16le'];
  try {
    await exec(FFMPEG_PATH, ['-nostdin', '-hide_banner', '-loglevel', 'error', '-i', mediaFile, '-vn', '-ac', '1', '-ar', '16000', ...codec, output], signal ? { signal } : {});
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    throw new TranscriberError(`the media could not be prepared for transcription: ${(error as Error).message.split('\n')[0] ?? ''}`, 'transcription_failed', false);
  }
}
