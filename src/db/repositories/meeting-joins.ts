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

export async function setBot(
  db: CommonQueryMethods,
  recordingId: string,
  bot: { botId?: string; state: string; reason?: string | null },
): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE meeting_joins SET bot_id = coalesce(${bot.botId ?? null}, bot_id), bot_state = ${bot.state}, bot_reason = ${bot.reason ?? null}, updated_at = now()
    WHERE recording_id = ${recordingId}`);
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
    UPDATE meeting_joins m SET bot_state = ${end.state}, bot_reason = ${end.reason ?? null}, updated_at = now()
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
