/**
 * When Temporal starts an activity's next attempt, from its retry policy (durations in ms): the
 * delay after attempt `n` fails is min(initial × coefficient^(n−1), maximum). Temporal's own
 * defaults fill what a policy leaves out (coefficient 2, maximum 100 × initial, unlimited attempts).
 * Pure: the worker shows the next attempt's time in the database without asking Temporal.
 */
export interface RetryPolicyMs {
  initialIntervalMs: number;
  backoffCoefficient?: number | undefined;
  maximumIntervalMs?: number | undefined;
  /** 0 or absent: unlimited. */
  maximumAttempts?: number | undefined;
}

/** The delay before the attempt after `failedAttempt` (1-based); null when that was the last attempt. */
export function retryDelayMs(policy: RetryPolicyMs, failedAttempt: number): number | null {
  if (!Number.isInteger(failedAttempt) || failedAttempt < 1) throw new RangeError(`attempt must be a positive integer: ${failedAttempt}`);
  if (policy.maximumAttempts && failedAttempt >= policy.maximumAttempts) return null;
  const coefficient = policy.backoffCoefficient ?? 2;
  const maximum = policy.maximumIntervalMs ?? policy.initialIntervalMs * 100;
  // Past the maximum the power only grows: stop before it overflows to Infinity.
  const delay = policy.initialIntervalMs * coefficient ** Math.min(failedAttempt - 1, 1024);
  return Math.round(Math.min(Number.isFinite(delay) ? delay : maximum, maximum));
}

/** The next attempt's time (epoch ms) for an attempt that failed at `failedAtMs`; null: none follows. */
export function nextAttemptAt(policy: RetryPolicyMs, failedAttempt: number, failedAtMs: number): number | null {
  const delay = retryDelayMs(policy, failedAttempt);
  return delay === null ? null : failedAtMs + delay;
}

/** Which attempt of a retried step this is, and the retry policy it runs under (a Temporal activity's). */
export interface StepAttempt {
  attempt: number;
  /** Null: unknown (an old server): no next attempt time can be told. */
  policy: RetryPolicyMs | null;
}
