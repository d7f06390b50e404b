import { LRUCache } from 'lru-cache';
import type { CommonQueryMethods } from 'slonik';
import { findCredentialByHash, type CredentialLookup } from '../db/repositories/agent-applications.js';

const MAX_ENTRIES = 10_000;

/**
 * Ingest-secret lookups kept for AGENT_CREDENTIAL_CACHE_SECONDS per API process: a chat product
 * sends every message with the same secret, and the lookup (credential, application, organization)
 * was one statement of every ingest. A revocation, or a change to the application (disabled,
 * deleted, settings), takes effect on every replica within that many seconds; 0 looks up every
 * request. Only found credentials are kept (an unknown secret is looked up each time).
 */
export class CredentialCache {
  private readonly cache: LRUCache<string, CredentialLookup> | null;

  constructor(ttlSeconds: number) {
    this.cache = ttlSeconds > 0 ? new LRUCache({ max: MAX_ENTRIES, ttl: ttlSeconds * 1000, ttlAutopurge: false }) : null;
  }

  async lookup(db: CommonQueryMethods, secretHash: Buffer): Promise<CredentialLookup | null> {
    const key = secretHash.toString('hex');
    const cached = this.cache?.get(key);
    if (cached) return cached;
    const found = await findCredentialByHash(db, secretHash);
    if (found) this.cache?.set(key, found);
    return found;
  }
}
