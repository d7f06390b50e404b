import { condition, continueAsNew, patched, upsertSearchAttributes } from '@temporalio/workflow';
import { STATUS } from '../search-attributes.js';
import type { AgentSessionInput } from './contract.js';
import type { SessionState } from './state.js';

/**
 * The run of histories recorded before processing existed (no `session-processing` patch marker):
 * it only folds ingest signals, shows the status, and closes when idle. Kept so that such runs
 * replay and finish. A run still open when this code is deployed continues as new into the
 * processing path at its next ingest (or closes when idle); remove both once none can be open.
 */
export async function legacySessionLoop(input: AgentSessionInput, state: SessionState): Promise<AgentSessionInput> {
  // Counts from 0 like the original run did: the starting signal wakes the first wait at once.
  let seen = 0;
  let shown = '';
  for (;;) {
    const woke = await condition(() => state.ingests > seen, `${input.idleTimeoutSeconds} seconds`);
    if (!woke) return input;
    // Code that knows processing: an old run moves to it at its next ingest (no marker in the
    // recorded histories, so they replay as before).
    if (patched('legacy-session-upgrade')) {
      return continueAsNew<(i: AgentSessionInput) => Promise<unknown>>({ ...input, version: 2, carried: state.carry() });
    }
    seen = state.ingests;
    if (state.status !== shown) {
      shown = state.status;
      upsertSearchAttributes([{ key: STATUS, value: shown }]);
    }
  }
}
