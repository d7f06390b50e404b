import type { DatabasePool } from 'slonik';
import { createApiKey } from '../src/auth/credentials.js';
import { SCOPES, type Scope } from '../src/auth/scopes.js';
import { createOrganization } from '../src/db/repositories/organizations.js';
import { createUser } from '../src/db/repositories/users.js';
import { testTokens } from './app.js';

let counter = 0;

export interface TestOrg {
  organizationId: string;
  apiKey: string;
  apiKeyId: string;
}

/** An organization with an all-scopes API key (admin included: tests read users with it). */
export async function createTestOrg(pool: DatabasePool, options: { credits?: number; recordingAllowed?: boolean } = {}): Promise<TestOrg> {
  const org = await pool.transaction((tx) =>
    createOrganization(tx, { name: `Org ${++counter}`, credits: options.credits ?? 0, recordingAllowed: options.recordingAllowed ?? true }),
  );
  const { row, apiKey } = await createApiKey(pool, { organizationId: org.id, scopes: [...SCOPES] });
  return { organizationId: org.id, apiKey, apiKeyId: row.id };
}

export async function createTestKey(pool: DatabasePool, organizationId: string, scopes: Scope[]) {
  const { row, apiKey } = await createApiKey(pool, { organizationId, scopes });
  return { apiKeyId: row.id, apiKey };
}

export async function createTestUser(pool: DatabasePool, organizationId: string, role: 'member' | 'admin' = 'member', ttlSeconds = 600) {
  const user = await createUser(pool, { organizationId, email: `user${++counter}@example.com`, role });
  const { accessToken } = await testTokens().issue({ id: user.id, organizationId }, ttlSeconds);
  return { userId: user.id, email: user.email, accessToken };
}
