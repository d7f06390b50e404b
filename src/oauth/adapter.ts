import { createHash } from 'node:crypto';
import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { DatabasePool } from 'slonik';
import {
  consumeModel,
  destroyGrant,
  destroyModel,
  findModel,
  keepClientWhileGranted,
  upsertModel,
  type ModelRow,
} from '../db/repositories/oauth-models.js';

/**
 * Models whose id is a bearer credential: tokens, codes, and sessions (the session cookie holds the
 * id). They are stored under the SHA-256 of the id, without the `jti` copy of it in the payload, so
 * that reading the table (a backup, a replica, a leak) gives no usable token; a lookup hashes the
 * id it was given. The ids are 256 random bits: a plain hash cannot be searched. Grants and
 * clients keep their ids (operators list and revoke grants by id; client ids are public), and so
 * do interactions (their id is in the page's URL, bound to a cookie of the browser).
 */
export const HASHED_MODELS: ReadonlySet<string> = new Set([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'ClientCredentials',
  'InitialAccessToken',
  'RegistrationAccessToken',
  'Session',
]);

/** The key a model instance is stored under: see HASHED_MODELS (migration 0021 hashes the same way). */
export function storedId(model: string, id: string): string {
  return HASHED_MODELS.has(model) ? createHash('sha256').update(id, 'utf8').digest('hex') : id;
}

/** A registered client that no user approved is forgotten after a day (then it registers again). */
export const UNUSED_CLIENT_SECONDS = 24 * 3600;

/**
 * oidc-provider's storage in PostgreSQL (table `oauth_models`): every API replica sees the same
 * clients, interactions, grants and tokens. A consumed instance (an authorization code, a rotated
 * refresh token) is still found, with `consumed` set, so that the provider can refuse its reuse
 * and revoke the grant; an expired one is not found. A client lives UNUSED_CLIENT_SECONDS after
 * its registration, or as long as the grants users gave it (the retention sweep purges it after).
 */
export function postgresAdapter(pool: DatabasePool): new (model: string) => Adapter {
  const payloadOf = (row: ModelRow | null): AdapterPayload | undefined => {
    if (!row) return undefined;
    const payload = row.payload as AdapterPayload;
    return row.consumed_at ? { ...payload, consumed: Math.floor(Date.parse(row.consumed_at) / 1000) } : payload;
  };
  return class PostgresAdapter implements Adapter {
    private readonly hashed: boolean;
    constructor(private readonly model: string) {
      this.hashed = HASHED_MODELS.has(model);
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
      const { jti: _jti, ...withoutId } = payload;
      // Anyone may register a client: one that no user approves expires (oidc-provider stores clients without a lifetime).
      const ttl = this.model === 'Client' ? (expiresIn ?? UNUSED_CLIENT_SECONDS) : expiresIn;
      await upsertModel(pool, this.model, storedId(this.model, id), this.hashed ? withoutId : payload, ttl);
      if (this.model === 'Grant' && typeof payload.clientId === 'string') await keepClientWhileGranted(pool, payload.clientId, expiresIn);
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      const payload = payloadOf(await findModel(pool, this.model, { id: storedId(this.model, id) }));
      // The caller holds the id: it goes back into the payload the provider expects.
      return payload && this.hashed ? { ...payload, jti: id } : payload;
    }

    // Found by uid (sessions) or user code, a hashed model has no id to give back: oidc-provider
    // only reads such an instance (a session's account, a device code's state), never saves it.
    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return payloadOf(await findModel(pool, this.model, { uid }));
    }

    async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      return payloadOf(await findModel(pool, this.model, { userCode }));
    }

    async consume(id: string): Promise<void> {
      await consumeModel(pool, this.model, storedId(this.model, id));
    }

    async destroy(id: string): Promise<void> {
      await destroyModel(pool, this.model, storedId(this.model, id));
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await destroyGrant(pool, grantId);
    }
  };
}
