import { presentRetry, retrySchema } from '../../../src/contracts/retry.js';
import type { MeetingJoinRow } from '../../../src/db/repositories/meeting-joins.js';
import type { JsonSchema, Validated } from '../../validation.js';

/** Spec "Meeting join" (issue 31): the recorder bot of a meeting recording, as the worker last saw it. */
export const meetingJoinStatusSchema = {
  type: 'object',
  additionalProperties: false,
  description: "A meeting recording's recorder bot: where it is, since when, why it failed, and a retry while the recorder is failing",
  required: ['recordingId', 'platform', 'botState', 'botStateSince', 'reason', 'createdAt', 'updatedAt'],
  properties: {
    recordingId: { type: 'string', format: 'uuid' },
    platform: { type: 'string', enum: ['zoom', 'google_meet', 'microsoft_teams', 'webex'] },
    botState: {
      type: 'string',
      enum: ['creating', 'joining', 'waiting_room', 'in_call', 'recording', 'done', 'failed'],
      description:
        'creating (the recorder is asked for a bot), joining, waiting_room (waiting to be admitted), in_call, recording; ' +
        "done (the meeting's media goes to the recording's asset) or failed (see reason)",
    },
    botStateSince: { type: 'string', format: 'date-time', description: 'When the bot entered botState' },
    reason: {
      type: ['string', 'null'],
      description:
        'When failed: why (waiting_room_timeout, denied, meeting_not_found, max_duration, recorder_unreachable, cancelled, …); else null',
    },
    retry: retrySchema,
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time', description: 'The last time the worker read or changed the bot' },
  },
} as const satisfies JsonSchema;
export type MeetingJoinStatus = Validated<typeof meetingJoinStatusSchema>;

export function presentMeetingJoin(row: MeetingJoinRow): MeetingJoinStatus {
  const retry = row.bot_state === 'done' || row.bot_state === 'failed' ? undefined : presentRetry(row);
  return {
    recordingId: row.recording_id,
    platform: row.platform as MeetingJoinStatus['platform'],
    botState: row.bot_state,
    botStateSince: row.bot_state_since,
    reason: row.bot_reason,
    ...(retry ? { retry } : {}),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
