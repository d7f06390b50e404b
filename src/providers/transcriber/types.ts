import type { Utterance } from '../../domain/transcript.js';

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
