import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

/** One stored oidc-provider model instance: its payload, and when it was consumed (codes, refresh tokens). */
const modelRow = z.object({ payload: z.record(z.string(), z.unknown()), consumed_at: z.string().nullable() });
export type ModelRow = z.infer<typeof modelRow>;

/** Inserts or replaces a model instance; `expiresInSeconds` undefined: kept until destroyed. */
export async function upsertModel(
  db: CommonQueryMethods,
  model: string,
  id: string,
  payload: Record<string, unknown>,
  expiresInSeconds: number | undefined,
): Promise<void> {
  const expires = expiresInSeconds === undefined ? sql.fragment`NULL` : sql.fragment`now() + ${expiresInSeconds} * interval '1 second'`;
  await db.query(sql.unsafe`
    INSERT INTO oauth_models (model, id, payload, expires_at) VALUES (${model}, ${id}, ${sql.jsonb(payload as never)}, ${expires})
    ON CONFLICT (model, id) DO UPDATE SET payload = EXCLUDED.payload, expires_at = EXCLUDED.expires_at`);
}

/**
 * A client lives at least as long as a grant it was given (one never approved expires: the
 * adapter registers clients with a lifetime); a grant kept until revoked keeps its client so too.
 */
export async function keepClientWhileGranted(
  db: CommonQueryMethods,
  clientId: string,
  grantExpiresInSeconds: number | undefined,
): Promise<void> {
  const until =
    grantExpiresInSeconds === undefined
      ? sql.fragment`NULL`
      : sql.fragment`greatest(expires_at, now() + ${grantExpiresInSeconds} * interval '1 second')`;
  await db.query(
    sql.unsafe`UPDATE oauth_models SET expires_at = ${until} WHERE model = 'Client' AND id = ${clientId} AND expires_at IS NOT NULL`,
  );
}

/** Not expired: `expires_at` of the table, or of the row alias given. */
const live = (alias?: string) => {
  const expiresAt = sql.identifier(alias ? [alias, 'expires_at'] : ['expires_at']);
  return sql.fragment`(${expiresAt} IS NULL OR ${expiresAt} > now())`;
};

/** A model instance that has not expired, looked up by id, by its `uid` or by its `userCode`. */
export async function findModel(
  db: CommonQueryMethods,
  model: string,
  by: { id: string } | { uid: string } | { userCode: string },
): Promise<ModelRow | null> {
  const where =
    'id' in by ? sql.fragment`id = ${by.id}` : 'uid' in by ? sql.fragment`uid = ${by.uid}` : sql.fragment`user_code = ${by.userCode}`;
  return db.maybeOne(sql.type(modelRow)`
    SELECT payload, consumed_at FROM oauth_models WHERE model = ${model} AND ${where} AND ${live()} LIMIT 1`);
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

const grantRow = z.object({
  grant_id: z.string(),
  client_id: z.string(),
  client_name: z.string().nullable(),
  scopes: z.array(z.string()),
  granted_at: z.string(),
  expires_at: z.string().nullable(),
});
export type GrantRow = z.infer<typeof grantRow>;

/**
 * The grants a user has given (one per client), live ones only, oldest first: which client (and
 * the name it registered), the scopes granted for any resource, when and until when.
 */
export async function listUserGrants(db: CommonQueryMethods, userId: string): Promise<readonly GrantRow[]> {
  return db.any(sql.type(grantRow)`
    SELECT g.id AS grant_id, g.payload ->> 'clientId' AS client_id, c.payload ->> 'client_name' AS client_name,
      coalesce((
        SELECT array_agg(DISTINCT s ORDER BY s) FROM jsonb_each_text(coalesce(g.payload -> 'resources', '{}'::jsonb)) r,
          regexp_split_to_table(r.value, ' ') s WHERE s <> ''
      ), '{}') AS scopes,
      to_timestamp((g.payload ->> 'iat')::bigint) AS granted_at, g.expires_at
    FROM oauth_models g
    LEFT JOIN oauth_models c ON c.model = 'Client' AND c.id = g.payload ->> 'clientId'
    WHERE g.model = 'Grant' AND g.payload ->> 'accountId' = ${userId} AND ${live('g')}
    ORDER BY granted_at, g.id`);
}

/**
 * Revokes grants and everything issued under them (codes, access and refresh tokens): of one
 * user, every one, or the one `grantId` names when it is the user's. Returns the ids revoked.
 */
export async function revokeUserGrants(db: CommonQueryMethods, userId: string, grantId?: string): Promise<readonly string[]> {
  const which = grantId === undefined ? sql.fragment`TRUE` : sql.fragment`id = ${grantId}`;
  const rows = await db.any(sql.type(z.object({ id: z.string() }))`
    WITH grants AS (
      DELETE FROM oauth_models WHERE model = 'Grant' AND payload ->> 'accountId' = ${userId} AND ${which} RETURNING id
    ), issued AS (
      DELETE FROM oauth_models WHERE grant_id IN (SELECT id FROM grants)
    )
    SELECT id FROM grants ORDER BY id`);
  return rows.map((r) => r.id);
}

/** The live grant a user gave a client (the newest when there are several), or null. */
export async function findUserClientGrantId(db: CommonQueryMethods, userId: string, clientId: string): Promise<string | null> {
  return db.maybeOneFirst(sql.type(z.object({ id: z.string() }))`
    SELECT id FROM oauth_models
    WHERE model = 'Grant' AND payload ->> 'accountId' = ${userId} AND payload ->> 'clientId' = ${clientId} AND ${live()}
    ORDER BY (payload ->> 'iat')::bigint DESC LIMIT 1`);
}

/**
 * Ends a user's sign-in sessions at the authorization server, and the interactions under way in
 * them: the next authorization asks for the password (or the identity provider) again.
 */
export async function endUserSessions(db: CommonQueryMethods, userId: string): Promise<number> {
  const rows = await db.any(sql.type(z.object({ id: z.string() }))`
    DELETE FROM oauth_models
    WHERE (model = 'Session' AND payload ->> 'accountId' = ${userId})
       OR (model = 'Interaction' AND payload -> 'session' ->> 'accountId' = ${userId})
    RETURNING id`);
  return rows.length;
}
