import { UniqueIntegrityConstraintViolationError, type CommonQueryMethods, type DatabasePool } from 'slonik';
import { displayPrefix, generateSecret, hashSecret } from '../auth/secrets.js';
import {
  insertApplication,
  insertCredential,
  lockApplication,
  updateApplication,
  type ApplicationRow,
  type ApplicationSettings,
  type CredentialRow,
} from '../db/repositories/agent-applications.js';
import { activeUserIds } from '../db/repositories/agent-participants.js';
import { restrictSessionsToUsers } from '../db/repositories/agent-sessions.js';
import type { Tx } from '../db/pool.js';
import { ConflictError, NotFoundError, ValidationError } from '../errors.js';
import type { ConversationAccess, SettingsPatch } from '../contracts/agent-applications.js';

/** Agent ingest secrets: `iak_` + 256 random bits; shown once, stored as SHA-256. */
export const AGENT_SECRET_PREFIX = 'iak';

export type { ConversationAccess, SettingsPatch };
/** Presented as the API's response schema says (src/contracts/agent-applications.ts). */
export { presentApplication, presentCredential } from '../contracts/agent-applications.js';

/** Creates the application and applies any settings given with it, atomically. */
export async function createApplication(
  db: CommonQueryMethods,
  input: { organizationId: string; name: string; agentKey: string; settings?: SettingsPatch },
): Promise<ApplicationRow> {
  try {
    return await db.transaction(async (tx) => {
      const created = await insertApplication(tx, input);
      return input.settings && Object.keys(input.settings).length ? applyPatch(tx, created, input.settings) : created;
    });
  } catch (error) {
    if (error instanceof UniqueIntegrityConstraintViolationError) {
      throw new ConflictError('agent_key_taken', `An application with agentKey '${input.agentKey}' already exists in this organization.`);
    }
    throw error;
  }
}

/** Applies a patch in one transaction (settings and the restriction of existing conversations). */
export async function changeApplication(
  pool: DatabasePool,
  organizationId: string,
  id: string,
  patch: SettingsPatch,
): Promise<ApplicationRow> {
  return pool.transaction(async (tx) => {
    // Locked: a concurrent change waits and then patches what this one wrote (no lost update).
    const current = await lockApplication(tx, organizationId, id);
    if (!current) throw new NotFoundError('Agent application');
    return applyPatch(tx, current, patch);
  });
}

async function applyPatch(tx: Tx, current: ApplicationRow, patch: SettingsPatch): Promise<ApplicationRow> {
  const access = patch.conversationAccess;
  if (access?.type === 'users') await requireActiveUsers(tx, current.organization_id, access.userIds);
  const settings: ApplicationSettings = {
    name: patch.name ?? current.name,
    status: patch.status ?? current.status,
    contentCapture: patch.contentCapture ?? current.content_capture,
    redactedFieldNames: unique(patch.redactedFieldNames ?? current.redacted_field_names),
    redactedTextPatterns: unique(patch.redactedTextPatterns ?? current.redacted_text_patterns),
    retentionDays: patch.retentionDays === undefined ? current.retention_days : patch.retentionDays,
    allowedEnvironments: unique(patch.allowedEnvironments ?? current.allowed_environments),
    access: access ? access.type : current.access,
    accessUserIds: access ? (access.type === 'users' ? unique(access.userIds.map((u) => u.toLowerCase())) : []) : current.access_user_ids,
  };
  const updated = await updateApplication(tx, current.id, settings);
  // Narrowed access applies to the existing conversations too, in the same transaction.
  if (settings.access === 'users') await restrictSessionsToUsers(tx, current.id, settings.accessUserIds);
  return updated;
}

export async function issueCredential(
  db: CommonQueryMethods,
  application: ApplicationRow,
): Promise<{ row: CredentialRow; secret: string }> {
  const secret = generateSecret(AGENT_SECRET_PREFIX);
  const row = await insertCredential(db, { application, displayPrefix: displayPrefix(secret), secretHash: hashSecret(secret) });
  return { row, secret };
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}

/** Conversation access names users of the organization who can sign in; anything else is a mistake. */
async function requireActiveUsers(db: CommonQueryMethods, organizationId: string, userIds: string[]): Promise<void> {
  const known = await activeUserIds(db, organizationId, userIds);
  const errors = userIds
    .map((u, i) => ({ u: u.toLowerCase(), i }))
    .filter(({ u }) => !known.has(u))
    .map(({ i }) => ({ path: `body.conversationAccess.userIds.${i}`, message: 'is not an active user of this organization' }));
  if (errors.length) throw new ValidationError(errors);
}
