import { resumeBlockedSessions } from '../../src/agents/session-workflow.js';
import { requireOwned } from '../../src/auth/ownership.js';
import { addCredits, findOrganization, type OrganizationRow } from '../../src/db/repositories/organizations.js';
import { findUser, type UserRow } from '../../src/db/repositories/users.js';
import { NotFoundError } from '../../src/errors.js';
import type { AppContext, AppDeps } from '../context.js';
import { principalOf } from '../middleware/auth.js';
import type { RouteInput } from '../routes.js';
import type { AddCreditsBody } from './schemas.js';

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
  /** Billing-blocked sessions resume now; if Temporal is unreachable they re-check by themselves. */
  const resume = async (ctx: AppContext, organizationId: string): Promise<number> => {
    try {
      return await deps.temporal.connection.withDeadline(Date.now() + 10_000, () =>
        resumeBlockedSessions(deps.pool, deps.temporal.client, deps.config, organizationId));
    } catch (error) {
      ctx.state.log.warn({ err: error, organizationId }, 'could not wake billing-blocked sessions after a top-up');
      return 0;
    }
  };
  return {
    getOrganization: async (ctx: AppContext) => {
      const org = await findOrganization(deps.pool, principalOf(ctx).organizationId);
      if (!org) throw new NotFoundError('Organization');
      ctx.body = presentOrganization(org);
    },
    addCredits: async (ctx: AppContext, { body }: RouteInput<AddCreditsBody, unknown>) => {
      const principal = principalOf(ctx);
      const org = await addCredits(deps.pool, principal.organizationId, body.amount, body.reason ?? `api:${principal.kind}`);
      if (!org) throw new NotFoundError('Organization');
      ctx.body = { organizationId: org.id, balance: org.credit_balance, resumedSessions: await resume(ctx, org.id) };
    },
    getUser: async (ctx: AppContext, { params }: RouteInput<unknown, unknown>) => {
      const user = requireOwned(principalOf(ctx), 'User', await findUser(deps.pool, params.userId ?? ''));
      ctx.body = presentUser(user);
    },
  };
}
