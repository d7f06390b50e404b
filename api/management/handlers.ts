import { requireOwned } from '../../src/auth/ownership.js';
// eslint-disable-next-line no-restricted-imports -- issue 30: moved out by the gateway/services work
import { findOrganization, type OrganizationRow } from '../../src/db/repositories/organizations.js';
// eslint-disable-next-line no-restricted-imports -- issue 30: moved out by the gateway/services work
import { findUser, type UserRow } from '../../src/db/repositories/users.js';
import { NotFoundError } from '../../src/errors.js';
import type { AppContext, AppDeps } from '../context.js';
import { principalOf } from '../middleware/auth.js';
import type { RouteInput } from '../routes.js';

export function presentOrganization(org: OrganizationRow) {
  return {
    organizationId: org.id,
    name: org.name,
    recordingAllowed: org.recording_allowed,
    creditBalance: org.credit_balance,
    createdAt: org.created_at,
  };
}

export function presentUser(user: UserRow) {
  return {
    userId: user.id,
    email: user.email,
    firstName: user.first_name,
    lastName: user.last_name,
    role: user.role,
    status: user.status,
    createdAt: user.created_at,
  };
}

export function managementHandlers(deps: AppDeps) {
  return {
    getOrganization: async (ctx: AppContext) => {
      const org = await findOrganization(deps.pool, principalOf(ctx).organizationId);
      if (!org) throw new NotFoundError('Organization');
      ctx.body = presentOrganization(org);
    },
    getUser: async (ctx: AppContext, { params }: RouteInput<unknown, unknown>) => {
      const user = requireOwned(principalOf(ctx), 'User', await findUser(deps.pool, params.userId ?? ''));
      ctx.body = presentUser(user);
    },
  };
}
