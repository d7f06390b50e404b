/**
 * The rest of a person's erasure, `person-erasure/<erasureId>` (issue 32, point 2): the request's
 * transaction made the person a tombstone and wrote the erasure (`person_erasures`); this workflow
 * searches every place of the organization's data that may hold the person's e-mail, a batch at a
 * time, and finishes the erasure (which forgets the address). Its input and results hold ids and
 * counts only: the address never enters a workflow history.
 */
export const PERSON_ERASURE_WORKFLOW = 'personErasureWorkflow';

export function personErasureWorkflowId(erasureId: string): string {
  return `person-erasure/${erasureId}`;
}

export interface PersonErasureInput {
  erasureId: string;
  /** A search without a heartbeat for this long is retried from its last batch (a dead worker); default 60. */
  heartbeatTimeoutSeconds?: number;
}

export { ERASURE_PLACES, FIRST_ERASURE_PLACES, type ErasurePlace as ErasurePlaceName } from '../../src/domain/erasure-places.js';

/** Workflows started since identifiers are erased (issue 50) search `metadata_records` and `media_ingestions` too. */
export const ERASE_IDENTIFIERS_PATCH = 'erase-identifiers';
import type { ErasurePlace } from '../../src/domain/erasure-places.js';

export interface PersonErasureResult {
  /** Rows changed (feedback records: deleted) per place. */
  counts: Partial<Record<ErasurePlace, number>>;
}
