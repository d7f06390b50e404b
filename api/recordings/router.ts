import type { AppDeps } from '../context.js';
import type { AuthRequirement } from '../middleware/auth.js';
import { perOrganization, rateLimit, withRateLimit } from '../middleware/rate-limit.js';
import { ERROR_REF } from '../openapi.js';
import type { RouteRegistry } from '../routes.js';
import { SYNC_LIST_DESCRIPTION } from '../sync.js';
import { recordingHandlers } from './handlers.js';
import {
  conflictSchema,
  createRecordingBody,
  listQuery,
  listSchema,
  recordingSchema,
  transcriptQuery,
  transcriptSchema,
} from './schemas.js';

/** The recordings area: organization API keys or user tokens, with the recordings scopes. */
export function recordingRoutes(deps: AppDeps, registry: RouteRegistry): void {
  const h = recordingHandlers(deps);
  const read: AuthRequirement = { accept: ['apiKey', 'user'], scope: 'recordings:read' };
  const write: AuthRequirement = { accept: ['apiKey', 'user'], scope: 'recordings:write' };
  const tags = ['recordings'];
  const limiter = deps.rateLimits.limiter('recording-create', deps.config.rateLimits.recordingCreatesPerMinute);
  registry.add({
    method: 'post',
    path: '/v3/rest/recordings',
    operationId: 'createRecording',
    tags,
    auth: write,
    middleware: limiter ? [rateLimit(limiter, perOrganization)] : [],
    summary: 'Create a recording with its metadata record, folders, participants and transcript (atomic)',
    body: {
      schema: createRecordingBody,
      limitBytes: deps.config.recordings.bodyLimitBytes,
      tooLarge: 'recording_payload_too_large',
      precheck: 'transcriptLimits',
    },
    responses: withRateLimit(
      {
        201: { description: 'The recording (Location: /v3/rest/recordings/{id})', schema: recordingSchema },
        409: { description: 'record.externalId already used: recovery of the earlier recording', schema: conflictSchema },
        503: {
          description: 'With assetUrl: its ingestion could not be started (Temporal unreachable); nothing was stored, retry',
          schema: ERROR_REF,
        },
      },
      'Over RECORDING_CREATE_RATE_LIMIT_PER_MINUTE creates a minute for this organization',
    ),
    errors: ['recording_external_id_conflict', 'too_many_utterances', 'transcript_too_large', 'invalid_metadata_value'],
    handler: h.create,
  });
  registry.add({
    method: 'get',
    path: '/v3/rest/recordings',
    operationId: 'listRecordings',
    tags,
    auth: read,
    query: listQuery,
    summary: 'List recordings, newest recorded first (or in change order: incremental sync)',
    description: SYNC_LIST_DESCRIPTION,
    responses: { 200: { description: 'A page of recordings', schema: listSchema } },
    errors: ['invalid_cursor'],
    handler: h.list,
  });
  registry.add({
    method: 'get',
    path: '/v3/rest/recordings/{recordingId}',
    operationId: 'getRecording',
    tags,
    auth: read,
    summary: 'Get a recording',
    responses: { 200: { description: 'The recording', schema: recordingSchema } },
    handler: h.get,
  });
  registry.add({
    method: 'delete',
    path: '/v3/rest/recordings/{recordingId}',
    operationId: 'deleteRecording',
    tags,
    auth: write,
    summary: 'Delete a recording with its transcript, participants, metadata values, media and running work; deleting it again is 404',
    description:
      'The recording is gone from every read when the answer comes. Its media in the store, its running media ingestion or meeting join and its recorder bot are dealt with by the workflow `recording-deletion/{recordingId}` within minutes (see docs/guides/data-lifecycle.md).',
    responses: { 204: { description: 'Deleted' } },
    handler: h.remove,
  });
  registry.add({
    method: 'get',
    path: '/v3/rest/recordings/{recordingId}/transcript',
    operationId: 'getTranscript',
    tags,
    auth: read,
    query: transcriptQuery,
    summary: 'Get the transcript as utterances or monologues',
    responses: { 200: { description: 'The transcript', schema: transcriptSchema } },
    handler: h.transcript,
  });
}
