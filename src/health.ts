import type { TemporalGateway } from './temporal/gateway.js';
import type { DatabasePool } from 'slonik';
import { ping } from './db/repositories/operational-stats.js';

export type CheckResult = 'ok' | 'unavailable';

async function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export async function checkDatabase(pool: DatabasePool, timeoutMs = 2000): Promise<CheckResult> {
  try {
    await withTimeout(ping(pool), timeoutMs);
    return 'ok';
  } catch {
    return 'unavailable';
  }
}

/** Whether Temporal's frontend answers within the gateway's `probe` deadline. */
export async function checkTemporal(temporal: TemporalGateway): Promise<CheckResult> {
  return (await temporal.reachable()) ? 'ok' : 'unavailable';
}

/**
 * Whether the process that owns this API finished starting. `npm start` listens before its worker
 * runs and before it writes what the CLI reads (`.data/stack.json`); `/readyz` says `starting` (503)
 * until then, so that ready means usable: a script that waits for it can run the CLI at once.
 */
export class StartupGate {
  #open = false;
  get open(): boolean {
    return this.#open;
  }
  markReady(): void {
    this.#open = true;
  }
}
