import type { AppDeps } from '../context.js';
import type { AuthRequirement } from '../middleware/auth.js';
import { pageSchema } from '../paging.js';
import type { RouteRegistry } from '../routes.js';
import { agentApplicationHandlers } from './handlers.js';
import {
  applicationSchema,
  createApplicationBody,
  credentialListSchema,
  credentialSchema,
  deleteApplicationQuery,
  newCredentialSchema,
  pageQuery,
  updateApplicationBody,
} from './schemas.js';

/**
 * Agent applications and their ingest credentials: the spec's "product interface", as REST for
 * admin users and admin-scoped organization keys.
 */
export function agentApplicationRoutes(deps: AppDeps, registry: RouteRegistry): void {
  const h = agentApplicationHandlers(deps);
  const auth: AuthRequirement = { accept: ['apiKey', 'user'], scope: 'admin' };
  const common = { tags: ['agent-applications'], auth };
  const base = '/v3/rest/agent-applications';
  const one = { 200: { description: 'The application', schema: applicationSchema } };

  registry.add({
    ...common,
    method: 'post',
    path: base,
    operationId: 'createAgentApplication',
    summary: 'Register an agent application',
    idempotent: true,
    body: { schema: createApplicationBody },
    responses: {
      201: { description: 'The application', schema: applicationSchema },
    },
    errors: ['agent_key_taken'],
    handler: h.create,
  });
  registry.add({
    ...common,
    method: 'get',
    path: base,
    operationId: 'listAgentApplications',
    summary: 'List agent applications',
    query: pageQuery,
    responses: {
      200: {
        description: 'A page of applications',
        schema: pageSchema('applications', applicationSchema),
      },
    },
    handler: h.list,
  });
  registry.add({
    ...common,
    method: 'get',
    path: `${base}/{applicationId}`,
    operationId: 'getAgentApplication',
    summary: 'Get an agent application',
    responses: one,
    handler: h.get,
  });
  registry.add({
    ...common,
    method: 'patch',
    path: `${base}/{applicationId}`,
    operationId: 'updateAgentApplication',
    summary: 'Change settings (status, content capture, redaction, retention, environments, conversation access)',
    body: { schema: updateApplicationBody },
    responses: one,
    handler: h.update,
  });
  registry.add({
    ...common,
    method: 'delete',
    path: `${base}/{applicationId}`,
    operationId: 'deleteAgentApplication',
    summary:
      'Delete an application: its credentials stop at once (404); its conversations are kept, or deleted with `sessions=delete`; deleting it again is 404',
    query: deleteApplicationQuery,
    responses: { 204: { description: 'Deleted' } },
    handler: h.remove,
  });
  registry.add({
    ...common,
    method: 'post',
    path: `${base}/{applicationId}/credentials`,
    operationId: 'createAgentCredential',
    summary: 'Create an ingest secret (shown once; a retry with its Idempotency-Key within 24 hours shows it again)',
    idempotent: true,
    responses: { 201: { description: 'The credential with its secret', schema: newCredentialSchema } },
    handler: h.createCredential,
  });
  registry.add({
    ...common,
    method: 'get',
    path: `${base}/{applicationId}/credentials`,
    operationId: 'listAgentCredentials',
    summary: 'List ingest credentials (never their secrets)',
    responses: {
      200: {
        description: 'Credentials',
        schema: credentialListSchema,
      },
    },
    handler: h.listCredentials,
  });
  registry.add({
    ...common,
    method: 'delete',
    path: `${base}/{applicationId}/credentials/{credentialId}`,
    operationId: 'revokeAgentCredential',
    summary: 'Revoke an ingest credential (repeating it is harmless)',
    responses: { 200: { description: 'The revoked credential', schema: credentialSchema } },
    handler: h.revokeCredential,
  });
}
