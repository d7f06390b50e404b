import type { DatabasePool } from 'slonik';
import { clearRetry, noteRetry } from '../../db/repositories/media-ingestions.js';
import { assetErrorCodeOf } from '../../domain/failure-types.js';
import { failureMessage, UNKNOWN_FAILURE_MESSAGE } from '../../domain/failure-messages.js';
import { retryDelayMs, type StepAttempt } from '../../domain/retry-backoff.js';
import { MediaStepError } from './context.js';

/**
 * A step of an ingestion failed: when the runner will try it again, the ingestion's status shows
 * why (a catalogued code and message, never the error's own text), the attempt and when the next
 * one starts. A permanent failure, or the last attempt, records nothing: the workflow fails the
 * ingestion with its terminal errorCode. Best effort: a failed write never hides the step's error.
 */
export async function noteStepFailure(pool: DatabasePool, ingestionId: string, error: unknown, at: StepAttempt): Promise<void> {
  if (error instanceof MediaStepError && !error.retryable) return;
  if (!at.policy) return;
  const delayMs = retryDelayMs(at.policy, at.attempt);
  if (delayMs === null) return;
  // Anything but a step's own failure is internal: shown as the code it would end with, generic words.
  const note =
    error instanceof MediaStepError
      ? { errorCode: error.code, message: failureMessage(error.code, error.detail) }
      : { errorCode: assetErrorCodeOf(null), message: UNKNOWN_FAILURE_MESSAGE };
  await noteRetry(pool, ingestionId, { ...note, attempt: at.attempt, delayMs }).catch(() => undefined);
}

/** The step succeeded after a retry: its status no longer shows the failure. */
export async function clearStepFailure(pool: DatabasePool, ingestionId: string, at: StepAttempt): Promise<void> {
  if (at.attempt > 1) await clearRetry(pool, ingestionId).catch(() => undefined);
}
