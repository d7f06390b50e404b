/**
 * The webhook retry schedule as the console says it: the same numbers as the server's
 * (src/domain/webhook-retry.ts; the console may not import it, and test/unit/console/copy.test.ts
 * fails when the two differ).
 */
export const RETRY_DELAYS_MS: readonly number[] = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
];
/** An endpoint without a successful attempt for this long is disabled. */
export const DISABLE_AFTER_MS = 5 * 24 * 3_600_000;

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** 5 s, 5 min, 2 h: as the webhooks guide writes a delay. */
export function shortDuration(ms: number): string {
  if (ms < 60_000) return `${ms / 1000} s`;
  if (ms < HOUR) return `${ms / 60_000} min`;
  return `${ms / HOUR} h`;
}

/**
 * "A failed delivery is retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h: 8 attempts over
 * about 27 hours. An endpoint without a successful attempt for 5 days is disabled."
 */
export function retrySentence(delays: readonly number[] = RETRY_DELAYS_MS, disableAfterMs = DISABLE_AFTER_MS): string {
  const attempts = delays.length + 1;
  const spanMs = delays.reduce((sum, d) => sum + d, 0);
  const span = spanMs >= 2 * HOUR ? `about ${Math.floor(spanMs / HOUR)} hours` : `about ${Math.round(spanMs / 60_000)} minutes`;
  const each = delays.map(shortDuration);
  const after = each.length > 1 ? `${each.slice(0, -1).join(', ')} and ${each.at(-1)}` : (each[0] ?? '');
  const days = disableAfterMs / DAY;
  const disabled = Number.isInteger(days) ? `${days} day${days === 1 ? '' : 's'}` : `${Math.round(disableAfterMs / HOUR)} hours`;
  return `A failed delivery is retried after ${after}: ${attempts} attempts over ${span}. An endpoint without a successful attempt for ${disabled} is disabled.`;
}
