import { LRUCache } from 'lru-cache';
import type { CommonQueryMethods } from 'slonik';
import { findCredentialByHash, type CredentialLookup } from '../db/repositories/agent-applications.js';

const MAX_ENTRIES = 10_000;

/**
 * Ingest-secret lookups kept for AGENT_CREDENTIAL_CACHE_SECONDS per API process: a chat product
 * sends every message with the same secret, and the lookup (credential, application, organization)
 * was one statement of every ingest. The cache only saves that statement: the ingest's transaction
 * reads the lookup's stamp again (lockSessions) and an ingest prepared from an outdated lookup is
 * prepared again from `lookup(..., { fresh: true })`, so a revocation or a change to the application
 * applies to every ingest that starts after it was answered, on every replica. Only lookups that let
 * a request in are kept (an unknown, revoked or disabled one is looked up each time).
 */
export class CredentialCache {
  private readonly cache: LRUCache<string, CredentialLookup> | null;

  constructor(ttlSeconds: number) {
    this.cache = ttlSeconds > 0 ? new LRUCache({ max: MAX_ENTRIES, ttl: ttlSeconds * 1000, ttlAutopurge: false }) : null;
  }

  async lookup(db: CommonQueryMethods, secretHash: Buffer, o: { fresh?: boolean } = {}): Promise<CredentialLookup | null> {
    const key = secretHash.toString('hex');
    const cached = o.fresh ? undefined : this.cache?.get(key);
    if (cached) return cached;
    const found = await findCredentialByHash(db, secretHash);
    // Only what lets a request in is kept: a refusal (revoked, deleted, disabled) is always looked up again.
    if (found && ingestRefusal(found) === null) this.cache?.set(key, found);
    else this.cache?.delete(key);
    return found;
  }
}

/** Why a found ingest secret lets no ingest in, in the order the API answers them; null: it lets one in. */
export type IngestRefusal = 'credential_revoked' | 'application_deleted' | 'agent_chats_not_enabled' | 'application_disabled';

export function ingestRefusal(found: CredentialLookup): IngestRefusal | null {
  if (found.revoked_at) return 'credential_revoked';
  if (found.application.deleted_at) return 'application_deleted';
  if (!found.agent_chats_enabled) return 'agent_chats_not_enabled';
  if (found.application.status !== 'active') return 'application_disabled';
  return null;
}
