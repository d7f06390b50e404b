import type { SendDueResult } from './contract.js';

/** After a call with nothing sent and something due already (clock skew), wait at least this long: never a hot loop. */
export const MIN_WAIT_MS = 1_000;

export type NextStep =
  /** Call again at once: more is due. */
  | { kind: 'now' }
  /** Wait for a wake or `ms`; `endIfQuiet`: nothing is pending, so a quiet wait ends the workflow. */
  | { kind: 'wait'; ms: number; endIfQuiet: boolean }
  | { kind: 'end' };

/** What the workflow does after a call of `sendDueWebhooks`, at workflow time `nowMs`. */
export function nextStep(result: SendDueResult, nowMs: number, idleMs: number): NextStep {
  if (result.endpoint === 'gone') return { kind: 'end' };
  if (result.endpoint === 'disabled') return { kind: 'wait', ms: idleMs, endIfQuiet: true };
  if (result.more) return { kind: 'now' };
  if (result.nextDueAt === null) return { kind: 'wait', ms: idleMs, endIfQuiet: true };
  const until = Date.parse(result.nextDueAt) - nowMs;
  if (until <= 0 && result.attempted > 0) return { kind: 'now' };
  return { kind: 'wait', ms: Math.max(until, MIN_WAIT_MS), endIfQuiet: false };
}
