import { createHmac, randomUUID } from 'node:crypto';
import type { DatabasePool } from 'slonik';
import { deriveKey } from '../auth/secrets.js';
import { required, type Config } from '../config.js';
import { parseMeetingUrl } from '../domain/meeting-url.js';
import { AppError, ConflictError } from '../errors.js';
import type { TemporalGateway } from '../temporal/gateway.js';
import { meetingJoinWorkflowId, type MeetingJoinInput } from '../../workflows/meeting-join/contract.js';
import { requestMeetingBot } from './meeting-join-workflow.js';
import { requireRecordingAllowed } from './uploads.js';
import { taskQueues } from '../temporal/task-queues.js';

export interface MeetingJoinDeps {
  pool: DatabasePool;
  temporal: TemporalGateway;
  config: Pick<Config, 'temporal' | 'media' | 'meetings' | 'auth'>;
}

/**
 * A meeting's identity as its workflow id holds it: HMAC-SHA256 under a key derived from
 * SIGNING_SECRET, base64url, 128 bits (22 characters). The same meeting gets the same id (the
 * dedupe rule), and nobody who reads Temporal learns the code that lets one join.
 */
export function meetingIdentityHash(signingSecret: string, meetingIdentity: string): string {
  return createHmac('sha256', deriveKey(signingSecret, 'meeting-join-ids'))
    .update(meetingIdentity)
    .digest()
    .subarray(0, 16)
    .toString('base64url');
}

/** The meeting-join workflow id of a meeting in an organization. */
export function meetingJoinIdFor(signingSecret: string, organizationId: string, meetingIdentity: string): string {
  return meetingJoinWorkflowId(organizationId, meetingIdentityHash(signingSecret, meetingIdentity));
}

/**
 * Asks the recorder to join a meeting: `meeting-join/<organizationId>/<identity hash>` with
 * update-with-start and the use-existing conflict policy, answered once the recorder accepted the
 * bot. A run already active for the meeting (or one started by a racing request) answers with its
 * own recording.
 */
export async function joinMeeting(
  deps: MeetingJoinDeps,
  user: { organizationId: string; userId: string },
  joinUrl: string,
): Promise<{ recordingId: string }> {
  await requireRecordingAllowed(deps.pool, user.organizationId);
  const meeting = parseMeetingUrl(joinUrl);
  if (!meeting) {
    throw new ConflictError('meeting_url_not_supported');
  }
  const input: MeetingJoinInput = {
    organizationId: user.organizationId,
    userId: user.userId,
    recordingId: randomUUID(),
    platform: meeting.platform,
    meetingIdentity: meeting.identity,
    joinUrl: meeting.joinUrl,
    botName: deps.config.meetings.botName,
    pollSeconds: deps.config.meetings.pollSeconds,
    maxHours: deps.config.meetings.maxHours,
    heartbeatTimeoutSeconds: deps.config.media.heartbeatTimeoutSeconds,
    mediaTaskQueue: taskQueues(deps.config).media,
  };
  const answer = await requestMeetingBot(deps.temporal, {
    workflowId: meetingJoinIdFor(required(deps.config.auth.signingSecret, 'SIGNING_SECRET'), user.organizationId, meeting.identity),
    taskQueue: deps.config.temporal.taskQueue,
    input,
  });
  if ('recorderFailed' in answer) {
    throw new AppError('recorder_failed', { message: `The recorder could not create the bot: ${answer.recorderFailed}` });
  }
  return answer;
}
