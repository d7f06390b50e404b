import { patched, proxyActivities } from '@temporalio/workflow';
import type { PersonErasureActivities } from '../../activities/person-erasure.js';
import {
  ERASE_IDENTIFIERS_PATCH,
  ERASURE_PLACES,
  FIRST_ERASURE_PLACES,
  type PersonErasureInput,
  type PersonErasureResult,
} from './contract.js';

/** Finishes a person's erasure (see contract.ts): every place in turn, then the erasure is finished. */
export async function personErasureWorkflow(input: PersonErasureInput): Promise<PersonErasureResult> {
  // A place's search goes in batches and heartbeats its position: a worker that dies mid-way leaves
  // the next attempt to go on from the last batch. Retried until it succeeds.
  const search = proxyActivities<PersonErasureActivities>({
    startToCloseTimeout: '2 hours',
    heartbeatTimeout: `${input.heartbeatTimeoutSeconds ?? 60} seconds`,
    retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
  });
  const counts: PersonErasureResult['counts'] = {};
  // Histories of erasures started before the identifiers' places replay without them.
  const places = patched(ERASE_IDENTIFIERS_PATCH) ? ERASURE_PLACES : FIRST_ERASURE_PLACES;
  for (const place of places) {
    const changed = await search.erasePersonIn(input.erasureId, place);
    if (changed === null) return { counts };
    if (changed > 0) counts[place] = changed;
  }
  await search.finishPersonErasure(input.erasureId);
  return { counts };
}
