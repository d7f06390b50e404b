import { findMeetingJoin } from '../../../src/db/repositories/meeting-joins.js';
import { isUuid } from '../../../src/db/uuid.js';
import { NotFoundError } from '../../../src/errors.js';
import { joinMeeting } from '../../../src/recordings/meeting-joins.js';
import type { AppDeps } from '../../context.js';
import { principalOf } from '../../middleware/auth.js';
import { ERROR_REF } from '../../openapi.js';
import type { RouteRegistry } from '../../routes.js';
import type { JsonSchema } from '../../validation.js';
import { meetingJoinStatusSchema, presentMeetingJoin } from './schemas.js';

const meetingJoinBody = {
  type: 'object',
  additionalProperties: false,
  required: ['type', 'joinUrl'],
  properties: {
    type: { const: 'meetingUrl' },
    joinUrl: {
      type: 'string',
      minLength: 1,
      maxLength: 2048,
      pattern: '\\S',
      description: 'A Zoom, Google Meet, Microsoft Teams or Webex meeting link',
    },
  },
} as const satisfies JsonSchema;

const meetingJoinResponse = {
  type: 'object',
  additionalProperties: false,
  required: ['recordingId'],
  properties: { recordingId: { type: 'string', format: 'uuid' } },
} as const satisfies JsonSchema;

/** Spec "Meeting join": user tokens only (an organization API key is 403). */
export function meetingJoinRoutes(deps: AppDeps, registry: RouteRegistry): void {
  registry.add({
    method: 'post',
    path: '/v3/rest/recordings/meeting-joins',
    operationId: 'joinMeeting',
    tags: ['recordings'],
    auth: { accept: ['user'], forbid: ['apiKey'], scope: 'recordings:write', unknownUserNotFound: true },
    summary: 'Ask the recorder to join a meeting; an active recording of the same meeting is returned instead of a new one',
    body: { schema: meetingJoinBody },
    responses: {
      201: {
        description: 'The recording the bot makes',
        schema: meetingJoinResponse,
      },
      502: { description: 'Nothing is left behind', schema: ERROR_REF },
    },
    errors: ['recording_not_allowed', 'meeting_url_not_supported', 'recorder_failed'],
    handler: async (ctx, { body }) => {
      const principal = principalOf(ctx);
      if (principal.kind !== 'user') throw new Error('meeting joins require a user principal');
      const { recordingId } = await joinMeeting(deps, principal, body.joinUrl);
      ctx.status = 201;
      ctx.set('Location', `/v3/rest/recordings/${recordingId}`);
      ctx.body = { recordingId };
    },
  });
  registry.add({
    method: 'get',
    path: '/v3/rest/recordings/{recordingId}/meeting-join',
    operationId: 'getMeetingJoin',
    tags: ['recordings'],
    auth: { accept: ['apiKey', 'user'], scope: 'recordings:read' },
    summary: 'The recorder bot of a meeting recording: its state, since when, why it failed, and a retry while the recorder is failing',
    responses: {
      200: { description: 'The meeting join (404 for a recording not made by a meeting join)', schema: meetingJoinStatusSchema },
    },
    handler: async (ctx, { params }) => {
      const recordingId = params.recordingId ?? '';
      if (!isUuid(recordingId)) throw new NotFoundError('Meeting join');
      const row = await findMeetingJoin(deps.pool, principalOf(ctx).organizationId, recordingId.toLowerCase());
      if (!row) throw new NotFoundError('Meeting join');
      ctx.body = presentMeetingJoin(row);
    },
  });
}
