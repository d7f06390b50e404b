import { requireOwned } from '../../src/auth/ownership.js';
import { findOrganization } from '../../src/db/repositories/organizations.js';
import { findUser } from '../../src/db/repositories/users.js';
import { NotFoundError } from '../../src/errors.js';
import type { AppContext, AppDeps } from '../context.js';
import { principalOf } from '../middleware/auth.js';
import type { RouteInput } from '../routes.js';
import { presentOrganization, presentUser } from './schemas.js';

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
