import { ApplicationFailure } from '@temporalio/activity';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { DatabasePool } from 'slonik';
import { sql } from 'slonik';
import { z } from 'zod';
import { failMeetingRecording, insertMeetingRecording, setBot } from '../src/db/repositories/meeting-joins.js';
import { insertIngestion, insertUpload } from '../src/db/repositories/media-ingestions.js';
import type { UploadStore } from '../src/media/upload-store.js';
import { RecorderError, type BotMedia, type BotStatus, type MeetingToJoin, type Recorder } from '../src/providers/recorder/types.js';
import type { MeetingJoinInput } from '../workflows/meeting-join/contract.js';

export interface MeetingActivityDeps {
  pool: DatabasePool;
  recorder: Recorder;
  uploadStore: UploadStore;
}

/** A recorder failure: permanent ones carry their code and are not retried. */
function recorderFailure(error: unknown): unknown {
  if (error instanceof RecorderError)
    return ApplicationFailure.create({ type: error.code, message: error.message, nonRetryable: !error.retryable });
  return error;
}

export function createMeetingActivities(deps: MeetingActivityDeps) {
  return {
    async createMeetingRecording(input: MeetingJoinInput): Promise<void> {
      await deps.pool.transaction((tx) =>
        insertMeetingRecording(tx, {
          recordingId: input.recordingId,
          organizationId: input.organizationId,
          userId: input.userId,
          platform: input.platform,
          meetingIdentity: input.meetingIdentity,
          recorder: deps.recorder.name,
        }),
      );
    },

    /**
     * Asks the recorder for a bot (the request that started the run waits for this). The recording
     * id is the idempotency key: a retry after a lost answer gets the same bot, not a second one.
     */
    async createBot(recordingId: string, meeting: MeetingToJoin): Promise<{ botId: string }> {
      try {
        const { botId } = await deps.recorder.createBot(meeting, { idempotencyKey: recordingId });
        await setBot(deps.pool, recordingId, { botId, state: 'joining' });
        return { botId };
      } catch (error) {
        throw recorderFailure(error);
      }
    },

    /** The recorder could not create the bot: the recording goes, nothing active is left behind. */
    async discardMeetingRecording(recordingId: string): Promise<void> {
      await deps.pool.query(sql.unsafe`DELETE FROM recordings WHERE id = ${recordingId} AND source = 'meeting'`);
    },

    /** The bot's state, recorded on the meeting join when it changed. */
    async pollBot(recordingId: string, botId: string): Promise<BotStatus> {
      let status: BotStatus;
      try {
        status = await deps.recorder.botStatus(botId);
      } catch (error) {
        throw recorderFailure(error);
      }
      if (status.state !== 'failed' && status.state !== 'done') await setBot(deps.pool, recordingId, { state: status.state });
      return status;
    },

    async leaveBot(botId: string): Promise<void> {
      try {
        await deps.recorder.leave(botId);
      } catch (error) {
        throw recorderFailure(error);
      }
    },

    async failMeeting(recordingId: string, reason: string): Promise<void> {
      await deps.pool.transaction((tx) => failMeetingRecording(tx, recordingId, reason));
    },

    /**
     * The bot's recording becomes the recording's media ingestion: a URL the worker transfers
     * (SSRF-safe, like `assetUrl`), or a local file put into the upload store as a complete
     * upload. A retry finds the ingestion it made.
     */
    async handOffMedia(recordingId: string, media: BotMedia): Promise<{ ingestionId: string; kind: 'url' | 'upload' }> {
      const existing = await deps.pool.maybeOne(sql.type(z.object({ id: z.string(), kind: z.enum(['url', 'upload']) }))`
        SELECT id, kind FROM media_ingestions WHERE recording_id = ${recordingId} ORDER BY created_at DESC LIMIT 1`);
      const organizationId = await deps.pool.oneFirst(sql.type(z.object({ organization_id: z.string() }))`
        SELECT organization_id FROM recordings WHERE id = ${recordingId}`);
      await setBot(deps.pool, recordingId, { state: 'done' });
      if (media.kind === 'url') {
        if (existing) return { ingestionId: existing.id, kind: existing.kind };
        const ingestionId = randomUUID();
        await deps.pool.transaction(async (tx) => {
          // The URL is not stored: the transfer asks the recorder for a current one (see transferUrlMedia).
          await tx.query(sql.unsafe`UPDATE recordings SET asset_status = 'queued', updated_at = now() WHERE id = ${recordingId}`);
          await insertIngestion(tx, { id: ingestionId, organizationId, recordingId, kind: 'url' });
        });
        return { ingestionId, kind: 'url' };
      }
      const size = (await stat(media.path)).size;
      const ingestionId = existing?.id ?? randomUUID();
      if (!existing) {
        await deps.pool.transaction((tx) =>
          insertUpload(tx, {
            id: ingestionId,
            organizationId,
            recordingId,
            fileName: path.basename(media.path),
            fileSize: size,
            folderId: null,
            batchId: null,
            inMobileApp: false,
            createdBy: `recorder:${deps.recorder.name}`,
            origin: null,
            timeoutSeconds: 3600,
          }),
        );
      }
      const progress = await deps.uploadStore.progress(ingestionId);
      if (!progress || progress.offset !== size) {
        await deps.uploadStore.remove(ingestionId);
        await deps.uploadStore.create(ingestionId, size);
        await deps.uploadStore.datastore.write(createReadStream(media.path), ingestionId, 0);
      }
      return { ingestionId, kind: 'upload' };
    },
  };
}

export type MeetingActivities = ReturnType<typeof createMeetingActivities>;
