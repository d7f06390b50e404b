import { sql, type CommonQueryMethods, type DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
import { recordEvent } from './domain-events.js';
import { failRecorderMedia, insertMeetingRecordingRow } from './recordings.js';

const PLATFORM_NAMES: Record<string, string> = {
  zoom: 'Zoom',
  google_meet: 'Google Meet',
  microsoft_teams: 'Microsoft Teams',
  webex: 'Webex',
};

/** The recording of a meeting and its join row; a retry (same recording id) changes nothing. */
export async function insertMeetingRecording(
  tx: DatabaseTransactionConnection,
  m: { recordingId: string; organizationId: string; userId: string; platform: string; meetingIdentity: string; recorder: string },
): Promise<void> {
  await insertMeetingRecordingRow(tx, {
    id: m.recordingId,
    organizationId: m.organizationId,
    name: `${PLATFORM_NAMES[m.platform] ?? 'Online'} meeting`,
    userId: m.userId,
  });
  await tx.query(sql.unsafe`
    INSERT INTO meeting_joins (recording_id, organization_id, user_id, platform, meeting_identity, recorder)
    VALUES (${m.recordingId}, ${m.organizationId}, (SELECT id FROM users WHERE id = ${m.userId}), ${m.platform}, ${m.meetingIdentity}, ${m.recorder})
    ON CONFLICT (recording_id) DO NOTHING`);
}

/** A status read succeeded or the join ended: no retry to show. */
const NO_RETRY = sql.fragment`retry_error_code = NULL, retry_message = NULL, retry_attempt = NULL, retry_next_attempt_at = NULL`;

export async function setBot(
  db: CommonQueryMethods,
  recordingId: string,
  bot: { botId?: string; state: string; reason?: string | null },
): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE meeting_joins SET bot_id = coalesce(${bot.botId ?? null}, bot_id), bot_state = ${bot.state}, bot_reason = ${bot.reason ?? null},
      bot_state_since = CASE WHEN bot_state = ${bot.state} THEN bot_state_since ELSE now() END, ${NO_RETRY}, updated_at = now()
    WHERE recording_id = ${recordingId}`);
}

/** A recorder call that failed and will be retried (the bot's status read): shown on the join until the next success. */
export async function noteBotRetry(
  db: CommonQueryMethods,
  recordingId: string,
  r: { errorCode: string; message: string; attempt: number; delayMs: number },
): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE meeting_joins SET retry_error_code = ${r.errorCode}, retry_message = ${r.message}, retry_attempt = ${r.attempt},
      retry_next_attempt_at = now() + make_interval(secs => ${r.delayMs / 1000}), updated_at = now()
    WHERE recording_id = ${recordingId} AND bot_state NOT IN ('done', 'failed')`);
}

/** The bot's status was read (it is done, or failed): no retry to show. */
export async function clearBotRetry(db: CommonQueryMethods, recordingId: string): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE meeting_joins SET ${NO_RETRY}, updated_at = now() WHERE recording_id = ${recordingId} AND retry_error_code IS NOT NULL`);
}

export const meetingJoinRow = z.object({
  recording_id: z.string(),
  platform: z.string(),
  recorder: z.string(),
  bot_state: z.enum(['creating', 'joining', 'waiting_room', 'in_call', 'recording', 'done', 'failed']),
  bot_state_since: z.string(),
  bot_reason: z.string().nullable(),
  retry_error_code: z.string().nullable(),
  retry_message: z.string().nullable(),
  retry_attempt: z.number().nullable(),
  retry_next_attempt_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type MeetingJoinRow = z.infer<typeof meetingJoinRow>;

/** The meeting join of a recording of the organization, if it is a meeting recording. */
export async function findMeetingJoin(db: CommonQueryMethods, organizationId: string, recordingId: string): Promise<MeetingJoinRow | null> {
  return db.maybeOne(sql.type(meetingJoinRow)`
    SELECT recording_id, platform, recorder, bot_state, bot_state_since, bot_reason, retry_error_code, retry_message, retry_attempt,
      retry_next_attempt_at, created_at, updated_at
    FROM meeting_joins WHERE recording_id = ${recordingId} AND organization_id = ${organizationId}`);
}

/**
 * The bot's terminal state (`done` or `failed`), announced when the join was not over yet: a retry
 * of the activity that ended it rewrites the state and announces nothing.
 */
export async function endBot(
  tx: DatabaseTransactionConnection,
  recordingId: string,
  end: { state: 'done' | 'failed'; reason?: string | null },
): Promise<void> {
  const ended = await tx.maybeOne(sql.type(z.object({ organization_id: z.string(), was_over: z.boolean() }))`
    UPDATE meeting_joins m SET bot_state = ${end.state}, bot_reason = ${end.reason ?? null}, ${NO_RETRY},
      bot_state_since = CASE WHEN old.bot_state = ${end.state} THEN old.bot_state_since ELSE now() END, updated_at = now()
    FROM meeting_joins old
    WHERE m.recording_id = ${recordingId} AND old.recording_id = m.recording_id
    RETURNING m.organization_id, old.bot_state IN ('done', 'failed') AS was_over`);
  if (ended && !ended.was_over) {
    await recordEvent(tx, {
      type: 'meeting_join.ended',
      organizationId: ended.organization_id,
      subjectId: recordingId,
      payload: { recordingId, botState: end.state, reason: end.reason ?? null },
    });
  }
}

/** The bot failed: the recording's asset is `failed` (`recorder_failed`) and no transcript will come. */
export async function failMeetingRecording(tx: DatabaseTransactionConnection, recordingId: string, reason: string): Promise<void> {
  await endBot(tx, recordingId, { state: 'failed', reason });
  await failRecorderMedia(tx, recordingId);
}

/** The recorder bot of a meeting recording, if it has one. */
export async function findMeetingBot(db: CommonQueryMethods, recordingId: string): Promise<string | null> {
  return db.maybeOneFirst(sql.type(z.object({ bot_id: z.string().nullable() }))`
    SELECT bot_id FROM meeting_joins WHERE recording_id = ${recordingId}`);
}
