import { condition, upsertSearchAttributes } from '@temporalio/workflow';
import { STATUS } from '../search-attributes.js';
import type { AgentSessionInput } from './contract.js';
import type { SessionState } from './state.js';

/**
 * The run of histories recorded before processing existed (no `session-processing` patch marker):
 * it only folds ingest signals, shows the status, and closes when idle. Kept so that such runs
 * replay and finish; remove with `deprecatePatch` once none can be open (idle timeout passed).
 */
export async function legacySessionLoop(input: AgentSessionInput, state: SessionState): Promise<AgentSessionInput> {
  // Counts from 0 like the original run did: the starting signal wakes the first wait at once.
  let seen = 0;
  let shown = '';
  for (;;) {
    const woke = await condition(() => state.ingests > seen, `${input.idleTimeoutSeconds} seconds`);
    if (!woke) return input;
    seen = state.ingests;
    if (state.status !== shown) {
      shown = state.status;
      upsertSearchAttributes([{ key: STATUS, value: shown }]);
    }
  }
}
