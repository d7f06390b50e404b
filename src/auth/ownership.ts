import { NotFoundError } from '../errors.js';
import type { Principal } from './principal.js';

/**
 * The single rule for ids in paths and bodies: a row of another organization is reported exactly
 * like an unknown id (404), never 403, so that nobody learns what exists elsewhere.
 */
export function requireOwned<T extends { organization_id: string }>(principal: Principal, resource: string, row: T | null): T {
  if (!row || row.organization_id !== principal.organizationId) throw new NotFoundError(resource);
  return row;
}
