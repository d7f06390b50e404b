/**
 * When a webhook delivery is tried again (issue 31): the Standard Webhooks / Svix schedule. The
 * first attempt is immediate; after a failed attempt `n` (1-based) the next comes `delays[n - 1]`
 * later; after the last one the delivery is `failed`. 5 s + 5 min + 30 min + 2 h + 5 h + 10 h + 10 h
 * is a little over 27 hours: a receiver down for a day still gets every event.
 */
export const WEBHOOK_RETRY_DELAYS_MS: readonly number[] = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
];

/** Attempts in all: the first and one per delay. */
export function maxAttempts(delays: readonly number[] = WEBHOOK_RETRY_DELAYS_MS): number {
  return delays.length + 1;
}

/** Milliseconds from a failed attempt (the `attemptsMade`-th, 1-based) to the next, or null: no more attempts. */
export function retryDelayAfter(attemptsMade: number, delays: readonly number[] = WEBHOOK_RETRY_DELAYS_MS): number | null {
  if (attemptsMade < 1) return 0;
  return delays[attemptsMade - 1] ?? null;
}

/** An endpoint that has not had a successful attempt for this long is disabled. */
export const WEBHOOK_DISABLE_AFTER_MS = 5 * 24 * 3_600_000;

/** Whether an endpoint failing since `failingSince` is to be disabled at `now`. */
export function shouldDisable(failingSince: Date | null, now: Date, afterMs: number = WEBHOOK_DISABLE_AFTER_MS): boolean {
  return failingSince !== null && now.getTime() - failingSince.getTime() >= afterMs;
}
