import type { DatabasePool } from 'slonik';
import { presentGrant, type Grant } from '../contracts/grants.js';
import { listUserGrants, revokeUserGrants } from '../db/repositories/oauth-models.js';
import { NotFoundError } from '../errors.js';

/**
 * A signed-in user's own MCP grants (issue 32, point 4): the clients they approved, and revoking
 * one, which the consent page promises ("you can revoke this access at any time").
 */
export async function ownGrants(db: DatabasePool, userId: string): Promise<Grant[]> {
  return (await listUserGrants(db, userId)).map(presentGrant);
}

/** The client's access and refresh tokens stop working at once; its next authorization asks the user again. */
export async function revokeOwnGrant(db: DatabasePool, userId: string, grantId: string): Promise<void> {
  const revoked = await revokeUserGrants(db, userId, grantId);
  if (revoked.length === 0) throw new NotFoundError('Grant');
}
