import type { DatabasePool } from 'slonik';
import { createDiagnosticsActivities } from './diagnostics.js';

export interface ActivityDeps {
  pool: DatabasePool;
}

/** Every activity the worker registers, built from injected dependencies (tests pass their own pool). */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createDiagnosticsActivities(deps),
  };
}
