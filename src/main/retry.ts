import type { Logger } from '../logger.js';

/**
 * At start-up a dependency may still be coming up (containers start together): retry with backoff
 * for a while before giving up. After start-up the pool and gRPC reconnect on their own.
 */
export async function retryStartup<T>(what: string, logger: Logger, attempt: () => Promise<T>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let delay = 250;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (Date.now() + delay > deadline) throw error;
      logger.warn({ err: (error as Error).message }, `${what} not reachable yet; retrying in ${delay} ms`);
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, 5_000);
    }
  }
}
