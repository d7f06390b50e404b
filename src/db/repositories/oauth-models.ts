import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

/** One stored oidc-provider model instance: its payload, and when it was consumed (codes, refresh tokens). */
const modelRow = z.object({ payload: z.record(z.string(), z.unknown()), consumed_at: z.string().nullable() });
export type ModelRow = z.infer<typeof modelRow>;

/** Inserts or replaces a model instance; `expiresInSeconds` undefined: kept until destroyed. */
export async function upsertModel(db: CommonQueryMethods, model: string, id: string, payload: Record<string, unknown>, expiresInSeconds: number | undefined): Promise<void> {
  const expires = expiresInSeconds === undefined ? sql.fragment`NULL` : sql.fragment`now() + ${expiresInSeconds} * interval '1 second'`;
  await db.query(sql.unsafe`
    INSERT INTO oauth_models (model, id, payload, expires_at) VALUES (${model}, ${id}, ${sql.jsonb(payload as never)}, ${expires})
    ON CONFLICT (model, id) DO UPDATE SET payload = EXCLUDED.payload, expires_at = EXCLUDED.expires_at`);
}

const live = sql.fragment`(expires_at IS NULL OR expires_at > now())`;

/** A model instance that has not expired, looked up by id, by its `uid` or by its `userCode`. */
export async function findModel(db: CommonQueryMethods, model: string, by: { id: string } | { uid: string } | { userCode: string }): Promise<ModelRow | null> {
  const where = 'id' in by ? sql.fragment`id = ${by.id}` : 'uid' in by ? sql.fragment`uid = ${by.uid}` : sql.fragment`user_code = ${by.userCode}`;
  return db.maybeOne(sql.type(modelRow)`
    SELECT payload, consumed_at FROM oauth_models WHERE model = ${model} AND ${where} AND ${live} LIMIT 1`);
}

export async function consumeModel(db: CommonQueryMethods, model: string, id: string): Promise<void> {
  await db.query(sql.unsafe`UPDATE oauth_models SET consumed_at = coalesce(consumed_at, now()) WHERE model = ${model} AND id = ${id}`);
}

export async function destroyModel(db: CommonQueryMethods, model: string, id: string): Promise<void> {
  await db.query(sql.unsafe`DELETE FROM oauth_models WHERE model = ${model} AND id = ${id}`);
}

/** Everything issued under a grant (codes, tokens, the grant itself): a revoked grant leaves nothing usable. */
export async function destroyGrant(db: CommonQueryMethods, grantId: string): Promise<void> {
  await db.query(sql.unsafe`DELETE FROM oauth_models WHERE grant_id = ${grantId}`);
}

/** Deletes rows that expired before now (the retention sweep); returns how many. */
export async function purgeExpiredModels(db: CommonQueryMethods, limit: number): Promise<number> {
  const rows = await db.any(sql.type(z.object({ id: z.string() }))`
    DELETE FROM oauth_models WHERE ctid IN (SELECT ctid FROM oauth_models WHERE expires_at <= now() LIMIT ${limit}) RETURNING id`);
  return rows.length;
}
