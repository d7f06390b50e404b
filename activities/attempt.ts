import { Context } from '@temporalio/activity';
import { msOptionalToNumber } from '@temporalio/common/lib/time.js';
import type { StepAttempt } from '../src/domain/retry-backoff.js';

/**
 * The running activity's attempt and the retry policy its workflow gave it (durations in ms): what
 * a failure's next attempt time is computed from, without asking Temporal.
 */
export function attemptOf(): StepAttempt {
  const { attempt, retryPolicy } = Context.current().info;
  const initialIntervalMs = msOptionalToNumber(retryPolicy?.initialInterval);
  if (!retryPolicy || initialIntervalMs === undefined) return { attempt, policy: null };
  return {
    attempt,
    policy: {
      initialIntervalMs,
      backoffCoefficient: retryPolicy.backoffCoefficient,
      maximumIntervalMs: msOptionalToNumber(retryPolicy.maximumInterval),
      maximumAttempts: retryPolicy.maximumAttempts,
    },
  };
}
