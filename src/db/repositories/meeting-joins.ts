import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

const PLATFORM_NAMES: Record<string, string> = {
  zoom: 'Zoom',
  google_meet: 'Google Meet',
  microsoft_teams: 'Microsoft Teams',
  webex: 'Webex',
};

/** The recording of a meeting and its join row; a retry (same recording id) changes nothing. */
export async function insertMeetingRecording(
  tx: CommonQueryMethods,
  m: { recordingId: string; organizationId: string; userId: string; platform: string; meetingIdentity: string; recorder: string },
): Promise<void> {
  await tx.query(sql.unsafe`
    INSERT INTO recordings (id, organization_id, name, source, asset_status, transcript_status, created_by_user_id)
    VALUES (${m.recordingId}, ${m.organizationId}, ${`${PLATFORM_NAMES[m.platform] ?? 'Online'} meeting`}, 'meeting', 'waiting', 'waiting',
      (SELECT id FROM users WHERE id = ${m.userId}))
    ON CONFLICT (id) DO NOTHING`);
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

/** The bot failed: the recording's asset is `failed` (`recorder_failed`) and no transcript will come. */
export async function failMeetingRecording(tx: CommonQueryMethods, recordingId: string, reason: string): Promise<void> {
  await setBot(tx, recordingId, { state: 'failed', reason });
  await tx.query(sql.unsafe`
    UPDATE recordings SET asset_status = 'failed', asset_error_code = 'recorder_failed', transcript_status = 'failed', updated_at = now()
    WHERE id = ${recordingId} AND asset_status <> 'completed'`);
}

/** The recorder bot of a meeting recording, if it has one. */
export async function findMeetingBot(db: CommonQueryMethods, recordingId: string): Promise<string | null> {
  return db.maybeOneFirst(sql.type(z.object({ bot_id: z.string().nullable() }))`
    SELECT bot_id FROM meeting_joins WHERE recording_id = ${recordingId}`);
}
