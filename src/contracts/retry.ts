import type { FromSchema } from 'json-schema-to-ts';
import type { JsonSchema } from './json-schema.js';

/**
 * Work that failed and will be tried again (a URL transfer, an encode, a meeting bot's status read):
 * present only while it is retrying; gone once it succeeds or fails for good (then the terminal
 * `errorCode` tells why).
 */
export const retrySchema = {
  type: 'object',
  additionalProperties: false,
  description:
    'Present only while the work is being retried after a failure: the last failure, the attempt that failed and when the next starts. ' +
    'Absent once the work succeeds or fails for good (then the terminal errorCode tells why).',
  required: ['errorCode', 'message', 'attempt', 'nextAttemptAt'],
  properties: {
    errorCode: {
      type: 'string',
      description:
        'The last failure, from the same codes as a terminal errorCode: asset_unavailable, asset_dns_failed, asset_network_error, asset_empty, ' +
        'ffmpeg_unavailable, recorder_unavailable, provider_unreachable, provider_unavailable, invalid_response, processing_failed',
    },
    message: { type: 'string', description: 'What the failure means, in words (never internal details)' },
    attempt: { type: 'integer', minimum: 1, description: 'The attempt that failed (1 is the first try)' },
    nextAttemptAt: {
      type: 'string',
      format: 'date-time',
      description: 'When the next attempt starts (from the retry policy; approximate)',
    },
  },
} as const satisfies JsonSchema;
export type RetryStatus = FromSchema<typeof retrySchema>;

/** The retry columns of a row (migration 0028). */
export interface RetryColumns {
  retry_error_code: string | null;
  retry_message: string | null;
  retry_attempt: number | null;
  retry_next_attempt_at: string | null;
}

/** The row's retry, or undefined when none is under way. */
export function presentRetry(row: RetryColumns): RetryStatus | undefined {
  if (row.retry_error_code === null || row.retry_attempt === null || row.retry_next_attempt_at === null) return undefined;
  return {
    errorCode: row.retry_error_code,
    message: row.retry_message ?? '',
    attempt: row.retry_attempt,
    nextAttemptAt: row.retry_next_attempt_at,
  };
}
