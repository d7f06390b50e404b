import { condition, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import { STATUS } from '../search-attributes.js';
import { eventsIngested, sessionView, type AgentSessionInput } from './contract.js';
import { SessionState } from './state.js';

/**
 * One conversation's long-lived workflow. It folds every ingest signal into the session state,
 * shows the status in the Temporal UI, and closes after `idleTimeoutSeconds` without an ingest
 * (the next ingest's signal-with-start opens a new run).
 */
export async function agentSessionWorkflow(input: AgentSessionInput): Promise<AgentSessionInput> {
  const state = new SessionState();
  let unseen = 0;
  setHandler(eventsIngested, (signal) => {
    state.apply(signal);
    unseen++;
  });
  setHandler(sessionView, () => state.view);
  let shown = '';
  for (;;) {
    const woke = await condition(() => unseen > 0, `${input.idleTimeoutSeconds} seconds`);
    if (!woke) return input;
    unseen = 0;
    if (state.view.status !== shown) {
      shown = state.view.status;
      upsertSearchAttributes([{ key: STATUS, value: shown }]);
    }
  }
}
