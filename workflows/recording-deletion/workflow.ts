import { proxyActivities, sleep } from '@temporalio/workflow';
import type { MeetingActivities } from '../../activities/meeting-joins.js';
import type { RecordingDeletionActivities } from '../../activities/recording-deletion.js';
import { RECORDING_PURGE_ROUNDS, type RecordingDeletionInput, type RecordingDeletionResult } from './contract.js';

// Every step is idempotent and retried until it succeeds: the deletion is never left half done.
const steps = proxyActivities<RecordingDeletionActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});
// The bot's leave: a few tries (as the meeting join's own leave), then the deletion goes on.
const recorder = proxyActivities<MeetingActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '5 seconds', maximumInterval: '1 minute', maximumAttempts: 5 },
});

/**
 * Finishes a recording's deletion (see contract.ts). Its running media ingestion and meeting join
 * are terminated first (they write nothing more), the bot is told to leave, and the store is
 * searched for the recording's objects: once at once, then again after `settleSeconds` (an
 * activity of a terminated run stops at its next heartbeat, and may store a rendition before that),
 * until a search finds nothing. A worker that dies mid-way leaves the next attempt to go on.
 */
export async function recordingDeletionWorkflow(input: RecordingDeletionInput): Promise<RecordingDeletionResult> {
  const job = await steps.stopRecordingWork(input.recordingId);
  if (!job) return { objectsDeleted: 0, rounds: 0, botLeft: null };
  let botLeft: boolean | null = null;
  if (job.botId) {
    try {
      await recorder.leaveBot(job.botId);
      botLeft = true;
    } catch {
      // The recorder is unreachable: its bot leaves on its own when the meeting ends.
      botLeft = false;
    }
  }
  let objectsDeleted = await steps.purgeRecording(input.recordingId);
  let rounds = 1;
  for (;;) {
    await sleep(`${input.settleSeconds} seconds`);
    const found = await steps.purgeRecording(input.recordingId);
    objectsDeleted += found;
    rounds += 1;
    if (found === 0 || rounds >= RECORDING_PURGE_ROUNDS) break;
  }
  await steps.finishRecordingDeletion(input.recordingId);
  return { objectsDeleted, rounds, botLeft };
}
