import { activityInfo } from '@temporalio/activity';
import type { DatabasePool } from 'slonik';
import { schemaStatus } from '../src/db/repositories/schema-status.js';
import { describeFfmpeg, type FfmpegTools } from '../src/media/ffmpeg-tools.js';
import type { MeetingProvidersDescription } from '../src/providers/describe.js';
import type { DatabaseCheck, WorkerDescription } from '../workflows/diagnostics/contract.js';

export function createDiagnosticsActivities(deps: {
  pool: DatabasePool;
  ffmpeg: FfmpegTools;
  meetingProviders?: MeetingProvidersDescription;
}) {
  return {
    async checkDatabase(): Promise<DatabaseCheck> {
      return schemaStatus(deps.pool);
    },
    /** Which worker answered, the FFmpeg it would probe and encode with (or why it has none), and its meeting providers. */
    async describeWorker(): Promise<WorkerDescription> {
      return {
        identity: `pid-${process.pid}`,
        taskQueue: activityInfo().taskQueue,
        ffmpeg: await describeFfmpeg(deps.ffmpeg),
        ...(deps.meetingProviders ? { meetingProviders: deps.meetingProviders } : {}),
      };
    },
  };
}

export type DiagnosticsActivities = ReturnType<typeof createDiagnosticsActivities>;
