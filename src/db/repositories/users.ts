import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { isUuid } from '../uuid.js';

export const userRow = z.object({
  id: z.string(),
  organization_id: z.string(),
  email: z.string(),
  first_name: z.string().nullable(),
  last_name: z.string().nullable(),
  role: z.enum(['member', 'admin']),
  status: z.enum(['active', 'disabled']),
  created_at: z.string(),
  updated_at: z.string(),
});
export type UserRow = z.infer<typeof userRow>;

export async function createUser(
  db: CommonQueryMethods,
  input: { organizationId: string; email: string; firstName?: string; lastName?: string; role: 'member' | 'admin' },
): Promise<UserRow> {
  return db.one(sql.type(userRow)`
    INSERT INTO users (organization_id, email, first_name, last_name, role)
    VALUES (${input.organizationId}, ${input.email}, ${input.firstName ?? null}, ${input.lastName ?? null}, ${input.role})
    RETURNING *`);
}

export async function findUser(db: CommonQueryMethods, id: string): Promise<UserRow | null> {
  if (!isUuid(id)) return null;
  return db.maybeOne(sql.type(userRow)`SELECT * FROM users WHERE id = ${id}`);
}

/** The user only when it belongs to the organization: another organization's id reads as unknown. */
export async function findUserInOrganization(db: CommonQueryMethods, organizationId: string, id: string): Promise<UserRow | null> {
  if (!isUuid(id)) return null;
  return db.maybeOne(sql.type(userRow)`SELECT * FROM users WHERE id = ${id} AND organization_id = ${organizationId}`);
}
