import type { DatabasePool } from 'slonik';
import { createDatabasePool } from '../../src/db/pool.js';
import { startTestApi, type TestApi } from '../../harness/app.js';
import { testConfig } from '../../harness/config.js';
import { createTestOrg, type TestOrg } from '../../harness/fixtures.js';
import { createTestDatabase } from '../../harness/stack.js';

export interface FeedbackContext {
  databaseUrl: string;
  pool: DatabasePool;
  api: TestApi;
  org: TestOrg;
  other: TestOrg;
  /** Request with the organization's key. */
  as(key: string): (path: string, init?: RequestInit & { json?: unknown }) => ReturnType<TestApi['request']>;
  close(): Promise<void>;
}

/** A fresh database, the app with rate limits as configured, and two organizations. */
export async function feedbackContext(env: Record<string, string> = { FEEDBACK_RATE_LIMIT_PER_MINUTE: '0' }): Promise<FeedbackContext> {
  const databaseUrl = await createTestDatabase();
  const pool = await createDatabasePool(databaseUrl);
  const api = await startTestApi({ pool, databaseUrl, config: testConfig(env) });
  const org = await createTestOrg(pool);
  const other = await createTestOrg(pool);
  return {
    databaseUrl,
    pool,
    api,
    org,
    other,
    as:
      (key) =>
      (path, init = {}) =>
        api.request(path, { ...init, headers: { 'X-Service-Api-Key': key, ...(init.headers as Record<string, string>) } }),
    async close() {
      await api.close();
      await pool.end();
    },
  };
}
