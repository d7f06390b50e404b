import { clip as clipText } from '../http.js';
import type { ExtractedSignal, SignalKind } from '../../domain/signals.js';

/** One finalized assistant response with the visible user text that led to it. */
export interface Exchange {
  /** Visible user messages since the previous assistant response, oldest first (may be empty). */
  userMessages: string[];
  /** The finalized assistant response text. */
  response: string;
}

export type { ExtractedSignal, SignalKind } from '../../domain/signals.js';

export const SIGNAL_KINDS: readonly SignalKind[] = ['sentiment', 'issue', 'request', 'praise', 'topic'];

/** Bounds every provider's output is held to, whatever the provider returned. */
export const MAX_SUMMARY_CHARS = 500;
export const MAX_LABELS = 10;
export const MAX_LABEL_CHARS = 64;

/** Cuts to the summary limit without leaving half of a surrogate pair at the end. */
export function clip(text: string, max = MAX_SUMMARY_CHARS): string {
  return clipText(text, max);
}

export interface SignalExtractor {
  /** 'local' or 'openai' (stored beside each signal as the producer). */
  readonly name: string;
  extract(exchange: Exchange, options?: { signal?: AbortSignal }): Promise<ExtractedSignal[]>;
}

/**
 * A provider failure. `retryable`: the caller (a Temporal activity) retries with backoff;
 * otherwise it gives up on this response.
 */
export class ExtractorError extends Error {
  override name = 'ExtractorError';
  constructor(
    message: string,
    readonly code: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}
