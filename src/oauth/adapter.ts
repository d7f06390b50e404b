import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { DatabasePool } from 'slonik';
import { consumeModel, destroyGrant, destroyModel, findModel, keepClientWhileGranted, upsertModel, type ModelRow } from '../db/repositories/oauth-models.js';

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
    constructor(private readonly model: string) {}

    async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
      // Anyone may register a client: one that no user approves expires (oidc-provider stores clients without a lifetime).
      await upsertModel(pool, this.model, id, payload, this.model === 'Client' ? expiresIn ?? UNUSED_CLIENT_SECONDS : expiresIn);
      if (this.model === 'Grant' && typeof payload.clientId === 'string') await keepClientWhileGranted(pool, payload.clientId, expiresIn);
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      return payloadOf(await findModel(pool, this.model, { id }));
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return payloadOf(await findModel(pool, this.model, { uid }));
    }

    async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      return payloadOf(await findModel(pool, this.model, { userCode }));
    }

    async consume(id: string): Promise<void> {
      await consumeModel(pool, this.model, id);
    }

    async destroy(id: string): Promise<void> {
      await destroyModel(pool, this.model, id);
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await destroyGrant(pool, grantId);
    }
  };
}
