import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

/** Idempotency keys (migration 0027): claimed before a request runs, completed with its response. */

export interface IdempotencyScope {
  organizationId: string;
  /** `apiKey:<id>` or `user:<id>`: a key belongs to one credential of one organization. */
  credential: string;
}

export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  /** The JSON body as sent; null: no body. */
  body: string | null;
}

const keyRow = z.object({
  id: z.number(),
  /** The stored request hash is the one asked about. */
  same_request: z.boolean(),
  state: z.enum(['in_progress', 'completed']),
  claim: z.string(),
  locked: z.boolean(),
  response_status: z.number().nullable(),
  response_headers: z.record(z.string(), z.string()).nullable(),
  response_body: z.string().nullable(),
});
export type IdempotencyKeyRow = z.infer<typeof keyRow>;

/**
 * Claims the key for this request (one statement, so two racing requests cannot both claim it): a
 * new row, or a row past the retention (it no longer exists for the client), or the row of a request
 * with the same hash whose lock passed (its process died mid-way). Returns the claim token, or null
 * when the key is held or answered (read it with `findKey`).
 */
export async function claimKey(
  db: CommonQueryMethods,
  scope: IdempotencyScope,
  key: string,
  requestHash: Buffer,
  options: { lockSeconds: number; retentionSeconds: number },
): Promise<{ id: number; claim: string } | null> {
  return db.maybeOne(sql.type(z.object({ id: z.number(), claim: z.string() }))`
    INSERT INTO idempotency_keys (organization_id, credential, idempotency_key, request_hash, state, claim, locked_until)
    VALUES (${scope.organizationId}, ${scope.credential}, ${key}, ${sql.binary(requestHash)}, 'in_progress', gen_random_uuid(),
            now() + make_interval(secs => ${options.lockSeconds}))
    ON CONFLICT (organization_id, credential, idempotency_key) DO UPDATE SET
      request_hash = EXCLUDED.request_hash, state = 'in_progress', claim = EXCLUDED.claim, locked_until = EXCLUDED.locked_until,
      response_status = NULL, response_headers = NULL, response_body = NULL, created_at = now()
    WHERE idempotency_keys.created_at < now() - make_interval(secs => ${options.retentionSeconds})
       OR (idempotency_keys.state = 'in_progress' AND idempotency_keys.locked_until < now()
           AND idempotency_keys.request_hash = EXCLUDED.request_hash)
    RETURNING id, claim`);
}

/** The key's row within the retention; `locked`: in progress and its lock has not passed. */
export async function findKey(
  db: CommonQueryMethods,
  scope: IdempotencyScope,
  key: string,
  requestHash: Buffer,
  retentionSeconds: number,
): Promise<IdempotencyKeyRow | null> {
  return db.maybeOne(sql.type(keyRow)`
    SELECT id, request_hash = ${sql.binary(requestHash)} AS same_request, state, claim, (state = 'in_progress' AND locked_until >= now()) AS locked,
           response_status, response_headers, response_body
    FROM idempotency_keys
    WHERE organization_id = ${scope.organizationId} AND credential = ${scope.credential} AND idempotency_key = ${key}
      AND created_at >= now() - make_interval(secs => ${retentionSeconds})`);
}

/** Stores the response of the claim; false when the claim was taken over meanwhile (nothing stored). */
export async function completeKey(
  db: CommonQueryMethods,
  claim: { id: number; claim: string },
  response: StoredResponse,
): Promise<boolean> {
  const result = await db.query(sql.unsafe`
    UPDATE idempotency_keys SET state = 'completed', locked_until = NULL, response_status = ${response.status},
      response_headers = ${sql.jsonb(response.headers)}, response_body = ${response.body}
    WHERE id = ${claim.id} AND claim = ${claim.claim} AND state = 'in_progress'`);
  return result.rowCount === 1;
}

/** Drops the claim (a 5xx, or a response not stored): the client may retry with the same key. False when the claim was taken over meanwhile. */
export async function releaseKey(db: CommonQueryMethods, claim: { id: number; claim: string }): Promise<boolean> {
  const result = await db.query(
    sql.unsafe`DELETE FROM idempotency_keys WHERE id = ${claim.id} AND claim = ${claim.claim} AND state = 'in_progress'`,
  );
  return result.rowCount === 1;
}

/** The retention sweep's share: keys created more than `retentionSeconds` ago, at most `limit` a call. */
export async function purgeExpiredKeys(db: CommonQueryMethods, retentionSeconds: number, limit: number): Promise<number> {
  const result = await db.query(sql.unsafe`
    DELETE FROM idempotency_keys WHERE id IN (
      SELECT id FROM idempotency_keys WHERE created_at < now() - make_interval(secs => ${retentionSeconds}) ORDER BY created_at LIMIT ${limit})`);
  return result.rowCount;
}
