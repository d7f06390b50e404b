import { Context } from '@temporalio/activity';
import type { DatabasePool } from 'slonik';
import { mediaPipeline, type MediaPipelineDeps } from '../src/media/ingestion/context.js';
import { finishRecordingDeletion, purgeRecording, stopRecordingWork } from '../src/recordings/deletion.js';
import { TemporalGateway } from '../src/temporal/gateway.js';

/** The recording deletion's activities: adapters over src/recordings/deletion.ts. */
export function createRecordingDeletionActivities(deps: MediaPipelineDeps & { pool: DatabasePool }) {
  const media = mediaPipeline(deps);
  return {
    /** Terminates the recording's meeting join and media ingestion, with the worker's own Temporal client; null: the job is finished. */
    async stopRecordingWork(recordingId: string): Promise<{ botId: string | null } | null> {
      return stopRecordingWork({ pool: deps.pool, temporal: new TemporalGateway(Context.current().client) }, recordingId);
    },
    /** Deletes the recording's objects from the store: how many it found. */
    async purgeRecording(recordingId: string): Promise<number> {
      return purgeRecording({ pool: deps.pool, media }, recordingId);
    },
    async finishRecordingDeletion(recordingId: string): Promise<void> {
      await finishRecordingDeletion(deps.pool, recordingId);
    },
  };
}

export type RecordingDeletionActivities = ReturnType<typeof createRecordingDeletionActivities>;
