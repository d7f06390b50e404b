import { createHash, timingSafeEqual } from 'node:crypto';
import type { Next } from 'koa';
import { topUpCredits } from '../../src/agents/billing.js';
import { resumeBlockedSessions } from '../../src/agents/session-workflow.js';
import { NotFoundError, UnauthenticatedError } from '../../src/errors.js';
import type { AppContext, AppDeps } from '../context.js';
import { addCreditsBody, balanceSchema, type AddCreditsBody } from '../management/schemas.js';
import { ERROR_REF } from '../openapi.js';
import type { RouteInput, RouteRegistry } from '../routes.js';

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * The operator credential (`OPERATOR_TOKEN`, sent as `X-Operator-Token`): the service's operator or
 * its billing integration, never an organization. Without the variable every operator route is 401.
 */
function operatorAuth(deps: AppDeps) {
  const expected = deps.config.operatorToken ? digest(deps.config.operatorToken) : null;
  return async (ctx: AppContext, next: Next) => {
    const presented = ctx.get('x-operator-token').trim();
    if (!presented)
      throw new UnauthenticatedError('unauthenticated', 'Authentication required: send the operator token in X-Operator-Token.');
    if (!expected || !timingSafeEqual(digest(presented), expected)) {
      throw new UnauthenticatedError('invalid_credentials', 'The operator token is not valid.');
    }
    await next();
  };
}

/** Operator actions over HTTP: credit top-ups (organizations buy credits; they cannot grant them). */
export function operatorRoutes(deps: AppDeps, registry: RouteRegistry): void {
  registry.add({
    method: 'post',
    path: '/v3/operator/organizations/{organizationId}/credits',
    operationId: 'addCredits',
    tags: ['operator'],
    summary: 'Add credits to an organization (operator credential; wakes its billing-blocked agent sessions)',
    middleware: [operatorAuth(deps)],
    security: [{ operatorToken: [] }],
    body: { schema: addCreditsBody },
    responses: {
      200: { description: 'The new balance', schema: balanceSchema },
      401: { description: 'Operator token missing or wrong (or no OPERATOR_TOKEN configured)', schema: ERROR_REF },
    },
    errors: ['unauthenticated', 'invalid_credentials'],
    handler: async (ctx: AppContext, { params, body }: RouteInput<AddCreditsBody, unknown>) => {
      const result = await topUpCredits(
        deps.pool,
        { organizationId: params.organizationId ?? '', amount: body.amount, reason: body.reason ?? 'operator-api' },
        (organizationId) => resume(deps, ctx, organizationId),
      );
      if (!result) throw new NotFoundError('Organization');
      ctx.body = result;
    },
  });
}

/** Billing-blocked sessions resume now; if Temporal is unreachable they re-check by themselves. */
async function resume(deps: AppDeps, ctx: AppContext, organizationId: string): Promise<number> {
  try {
    return await resumeBlockedSessions(deps.pool, deps.temporal, deps.config, organizationId);
  } catch (error) {
    ctx.state.log.warn({ err: error, organizationId }, 'could not wake billing-blocked sessions after a top-up');
    return 0;
  }
}
