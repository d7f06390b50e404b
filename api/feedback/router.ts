import { erasurePreviewQuery, erasurePreviewSchema, personErasureSchema } from '../../src/contracts/person-erasures.js';
import type { AppDeps } from '../context.js';
import type { AuthRequirement } from '../middleware/auth.js';
import { rateLimit, withRateLimit } from '../middleware/rate-limit.js';
import { pageSchema } from '../paging.js';
import type { RouteRegistry, RouteSpec } from '../routes.js';
import { feedbackHandlers } from './handlers.js';
import {
  createRecordBody,
  createSourceBody,
  duplicateRecordSchema,
  pageQuery,
  peopleQuery,
  personSchema,
  recordSchema,
  recordsQuery,
  sourceSchema,
  upsertPersonBody,
} from './schemas.js';

/**
 * The feedback area: organization API keys only (a user token is not a credential here: 401),
 * reads need `feedback:read`, writes `feedback:write`, and every request counts against the key's per-minute limit.
 */
export function feedbackRoutes(deps: AppDeps, registry: RouteRegistry): void {
  const h = feedbackHandlers(deps);
  const limiter = deps.rateLimits.limiter('feedback', deps.config.rateLimits.feedbackPerMinute);
  const middleware = limiter ? [rateLimit(limiter)] : [];
  const read: AuthRequirement = { accept: ['apiKey'], scope: 'feedback:read' };
  const write: AuthRequirement = { accept: ['apiKey'], scope: 'feedback:write' };
  const common = { tags: ['feedback'], middleware };
  const withLimits = (spec: RouteSpec['responses']) =>
    withRateLimit(spec, 'Over FEEDBACK_RATE_LIMIT_PER_MINUTE (100) requests a minute for this key');

  registry.add({
    ...common,
    method: 'post',
    path: '/v3/rest/feedback-sources',
    operationId: 'createFeedbackSource',
    summary: 'Create a feedback source',
    auth: write,
    idempotent: true,
    body: { schema: createSourceBody },
    responses: withLimits({ 201: { description: 'The source', schema: sourceSchema } }),
    handler: h.createSource,
  });
  registry.add({
    ...common,
    method: 'get',
    path: '/v3/rest/feedback-sources',
    operationId: 'listFeedbackSources',
    summary: 'List feedback sources',
    auth: read,
    query: pageQuery,
    responses: withLimits({ 200: { description: 'A page of sources', schema: pageSchema('feedback_sources', sourceSchema) } }),
    handler: h.listSources,
  });
  registry.add({
    ...common,
    method: 'get',
    path: '/v3/rest/feedback-sources/{id}',
    operationId: 'getFeedbackSource',
    summary: 'Get a feedback source',
    auth: read,
    responses: withLimits({ 200: { description: 'The source', schema: sourceSchema } }),
    handler: h.getSource,
  });
  registry.add({
    ...common,
    method: 'put',
    path: '/v3/rest/people',
    operationId: 'upsertPerson',
    summary: 'Create or update a person by e-mail (case-insensitive); the company is upserted by domain',
    auth: write,
    body: { schema: upsertPersonBody },
    responses: withLimits({ 200: { description: 'Updated', schema: personSchema }, 201: { description: 'Created', schema: personSchema } }),
    handler: h.upsertPerson,
  });
  registry.add({
    ...common,
    method: 'get',
    path: '/v3/rest/people',
    operationId: 'listPeople',
    summary: 'Find people (by e-mail, case-insensitive)',
    auth: read,
    query: peopleQuery,
    responses: withLimits({ 200: { description: 'A page of people', schema: pageSchema('people', personSchema) } }),
    handler: h.listPeople,
  });
  const admin: AuthRequirement = { accept: ['apiKey', 'user'], scope: 'admin' };
  registry.add({
    ...common,
    method: 'post',
    path: '/v3/rest/people/{personId}/erase',
    operationId: 'erasePerson',
    summary: 'Erase a person (by id or uuid): the person becomes a tombstone at once; their data everywhere is erased by a workflow',
    description:
      'The person keeps their row with no identity (recordings and sessions keep their participant counts). Their feedback records are deleted, and their e-mail is erased from participants, events, signals, transcripts, metadata values, coding sessions, domain events and webhook deliveries by `person-erasure/{erasureId}`. The answer is the erasure: its audit record (who, when, counts), never the erased data. An erased or unknown person is 404.',
    auth: admin,
    responses: withLimits({ 202: { description: 'The erasure, running', schema: personErasureSchema } }),
    handler: h.erasePerson,
  });
  registry.add({
    ...common,
    method: 'get',
    path: '/v3/rest/people/erasure-preview',
    operationId: 'previewPersonErasure',
    summary: 'What erasing a person (by e-mail, id or uuid) would change now, per place; changes nothing',
    description:
      'Give `email` or `personId` (one of them). Counts the rows the erasure would change in each place it searches, in one snapshot: shown before the erasure is confirmed. An erased or unknown person is 404.',
    auth: admin,
    query: erasurePreviewQuery,
    responses: withLimits({ 200: { description: 'The person and the counts', schema: erasurePreviewSchema } }),
    errors: ['not_found'],
    handler: h.previewErasure,
  });
  registry.add({
    ...common,
    method: 'get',
    path: '/v3/rest/people/erasures/{erasureId}',
    operationId: 'getPersonErasure',
    summary: 'An erasure: whether it finished, and what it changed',
    auth: admin,
    responses: withLimits({ 200: { description: 'The erasure', schema: personErasureSchema } }),
    handler: h.getErasure,
  });
  registry.add({
    ...common,
    method: 'post',
    path: '/v3/rest/feedback-sources/{id}/records',
    operationId: 'createFeedbackRecord',
    summary: 'Send one feedback record',
    auth: write,
    body: { schema: createRecordBody },
    responses: withLimits({
      201: { description: 'The record', schema: recordSchema },
      409: { description: 'external_id already used in this source; `id` is the existing record', schema: duplicateRecordSchema },
    }),
    errors: ['duplicate_external_id'],
    handler: h.createRecord,
  });
  registry.add({
    ...common,
    method: 'get',
    path: '/v3/rest/feedback-sources/{id}/records',
    operationId: 'listFeedbackRecords',
    summary: 'List records of a source (filter by external_id)',
    auth: read,
    query: recordsQuery,
    responses: withLimits({ 200: { description: 'A page of records', schema: pageSchema('records', recordSchema) } }),
    handler: h.listRecords,
  });
  registry.add({
    ...common,
    method: 'get',
    path: '/v3/rest/feedback-sources/{id}/records/{recordId}',
    operationId: 'getFeedbackRecord',
    summary: 'Get a feedback record',
    auth: read,
    responses: withLimits({ 200: { description: 'The record', schema: recordSchema } }),
    handler: h.getRecord,
  });
  registry.add({
    ...common,
    method: 'delete',
    path: '/v3/rest/feedback-sources/{id}/records/{recordId}',
    operationId: 'deleteFeedbackRecord',
    summary: 'Delete a feedback record; deleting it again is 404 (its external_id may then be used again)',
    auth: write,
    responses: withLimits({ 204: { description: 'Deleted' } }),
    handler: h.deleteRecord,
  });
  registry.add({
    ...common,
    method: 'delete',
    path: '/v3/rest/feedback-sources/{id}',
    operationId: 'deleteFeedbackSource',
    summary: 'Delete a feedback source with all its records; deleting it again is 404',
    auth: write,
    responses: withLimits({ 204: { description: 'Deleted' } }),
    handler: h.deleteSource,
  });
}
