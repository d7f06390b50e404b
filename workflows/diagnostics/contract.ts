import { defineQuery } from '@temporalio/workflow';

/**
 * Diagnostics: a short workflow that proves the whole path works (a worker polls the task queue,
 * runs an activity, and that activity reaches PostgreSQL). Run by `intake doctor`.
 */
export const DIAGNOSTICS_WORKFLOW = 'diagnosticsWorkflow';

export function diagnosticsWorkflowId(runKey: string): string {
  return `diagnostics/${runKey}`;
}

export interface DiagnosticsInput {
  /** Never read (see MediaIngestionInput.version); new starts leave it out. */
  version?: 1;
  requestedBy: string;
}

export interface DatabaseCheck {
  serverVersion: string;
  migrationsApplied: number;
  latestMigration: string | null;
}

export interface WorkerDescription {
  identity: string;
  taskQueue: string;
  /** The worker's FFmpeg (absent in runs recorded before it was reported). */
  ffmpeg?: { version: string; ffmpeg: string; ffprobe: string; source: string } | { error: string };
  /** The worker's meeting recorder and transcriber, no secrets (absent in older runs, and from workers built without a configuration). */
  meetingProviders?: {
    recorder: Record<string, unknown> & { kind: string };
    platforms: string[];
    transcriber: Record<string, unknown> & { kind: string };
  };
}

export interface DiagnosticsResult {
  version: 1;
  requestedBy: string;
  database: DatabaseCheck;
  worker: WorkerDescription;
}

/** Where the run is: `checking-database`, `describing-worker`, then `done`. */
export const phaseQuery = defineQuery<string>('phase');
