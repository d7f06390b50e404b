import { activityInfo } from '@temporalio/activity';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import type { FfmpegTools } from '../src/media/ffmpeg-tools.js';
import type { MeetingProvidersDescription } from '../src/providers/describe.js';
import type { DatabaseCheck, WorkerDescription } from '../workflows/diagnostics/contract.js';

export function createDiagnosticsActivities(deps: {
  pool: DatabasePool;
  ffmpeg: FfmpegTools;
  meetingProviders?: MeetingProvidersDescription;
}) {
  return {
    async checkDatabase(): Promise<DatabaseCheck> {
      const row = await deps.pool.one(sql.type(
        z.object({ server_version: z.string(), applied: z.number(), latest: z.string().nullable() }),
      )`
        SELECT current_setting('server_version') AS server_version,
               (SELECT count(*)::int FROM schema_migrations) AS applied,
               (SELECT name FROM schema_migrations ORDER BY version DESC LIMIT 1) AS latest`);
      return { serverVersion: row.server_version, migrationsApplied: row.applied, latestMigration: row.latest };
    },
    /** Which worker answered, the FFmpeg it would probe and encode with (or why it has none), and its meeting providers. */
    async describeWorker(): Promise<WorkerDescription> {
      const info = activityInfo();
      const ffmpeg = await deps.ffmpeg.binaries().then(
        (b) => ({ version: b.version, ffmpeg: b.ffmpeg, ffprobe: b.ffprobe, source: b.source }),
        (error: unknown) => ({ error: (error as Error).message }),
      );
      return {
        identity: `pid-${process.pid}`,
        taskQueue: info.taskQueue,
        ffmpeg,
        ...(deps.meetingProviders ? { meetingProviders: deps.meetingProviders } : {}),
      };
    },
  };
}

export type DiagnosticsActivities = ReturnType<typeof createDiagnosticsActivities>;
