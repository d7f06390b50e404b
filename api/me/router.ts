import { ownGrants, revokeOwnGrant } from '../../src/auth/user-grants.js';
import { grantListSchema } from '../../src/contracts/grants.js';
import type { AppContext, AppDeps } from '../context.js';
import { principalOf } from '../middleware/auth.js';
import type { AuthRequirement } from '../middleware/auth.js';
import type { RouteInput, RouteRegistry } from '../routes.js';

/** The calling user's own things (issue 32, point 4): the MCP clients they approved. User tokens only. */
export function meRoutes(deps: AppDeps, registry: RouteRegistry): void {
  const auth: AuthRequirement = { accept: ['user'] };
  const userOf = (ctx: AppContext) => {
    const principal = principalOf(ctx);
    // auth accepts only users: a principal of another kind never reaches a handler.
    return principal.kind === 'user' ? principal.userId : '';
  };

  registry.add({
    method: 'get',
    path: '/v3/rest/me/grants',
    operationId: 'listMyGrants',
    tags: ['management'],
    auth,
    summary: 'The MCP clients the calling user approved, oldest first',
    responses: { 200: { description: 'The grants', schema: grantListSchema } },
    handler: async (ctx: AppContext) => {
      ctx.body = { grants: await ownGrants(deps.pool, userOf(ctx)) };
    },
  });
  registry.add({
    method: 'delete',
    path: '/v3/rest/me/grants/{grantId}',
    operationId: 'revokeMyGrant',
    tags: ['management'],
    auth,
    summary:
      'Revoke a grant: the client’s access and refresh tokens stop working at once, and its next authorization asks again; revoking it again is 404',
    responses: { 204: { description: 'Revoked' } },
    handler: async (ctx: AppContext, { params }: RouteInput<unknown, unknown>) => {
      await revokeOwnGrant(deps.pool, userOf(ctx), params.grantId ?? '');
      ctx.status = 204;
    },
  });
}
