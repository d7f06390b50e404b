import { sql, type CommonQueryMethods, type DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';

/** What a deleted recording leaves for its deletion workflow: objects, workflows, a bot. */
export const recordingDeletionRow = z.object({
  recording_id: z.string(),
  organization_id: z.string(),
  ingestion_ids: z.array(z.string()),
  meeting_workflow_id: z.string().nullable(),
  bot_id: z.string().nullable(),
  requested_at: z.string(),
  finished_at: z.string().nullable(),
});
export type RecordingDeletionRow = z.infer<typeof recordingDeletionRow>;

/** What a recording of the organization holds outside its rows, under a lock on the recording; null: no such recording. */
export async function lockRecordingForDeletion(
  tx: DatabaseTransactionConnection,
  organizationId: string,
  recordingId: string,
): Promise<{ ingestionIds: string[]; meetingIdentity: string | null; botId: string | null } | null> {
  const row = await tx.maybeOne(sql.type(
    z.object({ ingestion_ids: z.array(z.string()), meeting_identity: z.string().nullable(), bot_id: z.string().nullable() }),
  )`
    SELECT ARRAY(SELECT i.id::text FROM media_ingestions i WHERE i.recording_id = r.id ORDER BY i.created_at) AS ingestion_ids,
      m.meeting_identity, m.bot_id
    FROM recordings r LEFT JOIN meeting_joins m ON m.recording_id = r.id
    WHERE r.id = ${recordingId} AND r.organization_id = ${organizationId}
    FOR UPDATE OF r`);
  return row && { ingestionIds: row.ingestion_ids, meetingIdentity: row.meeting_identity, botId: row.bot_id };
}

/** The job of a recording deleted in this transaction (a job of the same id, however old, is open again with both lists). */
export async function insertRecordingDeletion(
  tx: DatabaseTransactionConnection,
  job: {
    recordingId: string;
    organizationId: string;
    ingestionIds: readonly string[];
    meetingWorkflowId: string | null;
    botId: string | null;
  },
): Promise<void> {
  await tx.query(sql.unsafe`
    INSERT INTO recording_deletions (recording_id, organization_id, ingestion_ids, meeting_workflow_id, bot_id)
    VALUES (${job.recordingId}, ${job.organizationId}, ${sql.array([...job.ingestionIds], 'uuid')}, ${job.meetingWorkflowId}, ${job.botId})
    ON CONFLICT (recording_id) DO UPDATE SET
      ingestion_ids = ARRAY(SELECT DISTINCT unnest(recording_deletions.ingestion_ids || EXCLUDED.ingestion_ids)),
      meeting_workflow_id = COALESCE(EXCLUDED.meeting_workflow_id, recording_deletions.meeting_workflow_id),
      bot_id = COALESCE(EXCLUDED.bot_id, recording_deletions.bot_id),
      requested_at = now(), finished_at = NULL`);
}

export async function findRecordingDeletion(db: CommonQueryMethods, recordingId: string): Promise<RecordingDeletionRow | null> {
  return db.maybeOne(sql.type(recordingDeletionRow)`
    SELECT recording_id, organization_id, ingestion_ids::text[] AS ingestion_ids, meeting_workflow_id, bot_id, requested_at, finished_at
    FROM recording_deletions WHERE recording_id = ${recordingId}`);
}

export async function finishRecordingDeletion(db: CommonQueryMethods, recordingId: string): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE recording_deletions SET finished_at = now() WHERE recording_id = ${recordingId} AND finished_at IS NULL`);
}

/** Open jobs requested before `olderThanSeconds` ago, oldest first: the reconciler makes sure each has its workflow. */
export async function unfinishedRecordingDeletions(
  db: CommonQueryMethods,
  olderThanSeconds: number,
  limit: number,
): Promise<{ recording_id: string; organization_id: string }[]> {
  return [
    ...(await db.any(sql.type(z.object({ recording_id: z.string(), organization_id: z.string() }))`
      SELECT recording_id, organization_id FROM recording_deletions
      WHERE finished_at IS NULL AND requested_at < now() - make_interval(secs => ${olderThanSeconds})
      ORDER BY requested_at LIMIT ${limit}`)),
  ];
}
