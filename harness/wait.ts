import { sleep } from '../src/dev/net.js';

/** Polls `probe` every `intervalMs` until it answers true (true) or `timeoutMs` passes (false). */
export async function waitFor(probe: () => Promise<boolean>, timeoutMs: number, intervalMs = 250): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await probe()) return true;
    await sleep(intervalMs);
  }
  return false;
}

/** The HTTP status of a GET, or 0 when nothing answers. */
export async function httpStatus(url: string): Promise<number> {
  return fetch(url).then(
    (r) => r.status,
    () => 0,
  );
}

/** Resolves with `value` after `ms`, without keeping the process alive (for Promise.race bounds). */
export function deadline<T>(ms: number, value: T): Promise<T> {
  return new Promise((resolve) => setTimeout(() => resolve(value), ms).unref());
}

/**
 * Calls `probe` every 250 ms until `accept` takes its answer or `timeoutMs` passes; returns the last
 * answer. A workflow not found yet counts as no answer: the drainer starts a session's workflow
 * shortly after the ingest that created the session.
 */
export async function eventually<T>(probe: () => Promise<T>, accept: (v: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      const last = await probe();
      if (accept(last) || Date.now() >= end) return last;
    } catch (error) {
      if ((error as Error).name !== 'WorkflowNotFoundError' || Date.now() >= end) throw error;
    }
    await sleep(250);
  }
}
