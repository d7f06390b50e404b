import { ApplicationFailure } from '@temporalio/activity';
import {
  createBot,
  createMeetingRecording,
  discardMeetingRecording,
  failMeeting,
  handOffMedia,
  noteRecorderFailure,
  pollBot,
  type MeetingBotDeps,
} from '../src/recordings/meeting-bots.js';
import { RecorderError, type BotMedia, type BotStatus, type MeetingToJoin } from '../src/providers/recorder/types.js';
import type { MeetingJoinInput } from '../workflows/meeting-join/contract.js';
import { attemptOf } from './attempt.js';

export type MeetingActivityDeps = MeetingBotDeps;

/** A recorder failure: permanent ones carry their code and are not retried. */
async function recorderStep<T>(run: Promise<T>): Promise<T> {
  try {
    return await run;
  } catch (error) {
    if (error instanceof RecorderError)
      throw ApplicationFailure.create({ type: error.code, message: error.message, nonRetryable: !error.retryable });
    throw error;
  }
}

/**
 * The meeting-join workflow's activities: adapters over src/recordings/meeting-bots.ts. Their
 * names, arguments and results are what stored workflow histories hold.
 */
export function createMeetingActivities(deps: MeetingActivityDeps) {
  /** A recorder call whose retryable failure the join shows (why, the attempt, the next one's time) until it succeeds. */
  const watched = async <T>(recordingId: string, run: () => Promise<T>): Promise<T> => {
    const at = attemptOf();
    try {
      return await run();
    } catch (error) {
      await noteRecorderFailure(deps, recordingId, error, at);
      throw error;
    }
  };
  return {
    async createMeetingRecording(input: MeetingJoinInput): Promise<void> {
      await createMeetingRecording(deps, input);
    },

    /** Asks the recorder for a bot (the request that started the run waits for this). */
    async createBot(recordingId: string, meeting: MeetingToJoin): Promise<{ botId: string }> {
      return recorderStep(watched(recordingId, () => createBot(deps, recordingId, meeting)));
    },

    async discardMeetingRecording(recordingId: string): Promise<void> {
      await discardMeetingRecording(deps, recordingId);
    },

    async pollBot(recordingId: string, botId: string): Promise<BotStatus> {
      return recorderStep(watched(recordingId, () => pollBot(deps, recordingId, botId)));
    },

    async leaveBot(botId: string): Promise<void> {
      return recorderStep(deps.recorder.leave(botId));
    },

    async failMeeting(recordingId: string, reason: string): Promise<void> {
      await failMeeting(deps, recordingId, reason);
    },

    async handOffMedia(recordingId: string, media: BotMedia): Promise<{ ingestionId: string; kind: 'url' | 'upload' }> {
      return handOffMedia(deps, recordingId, media);
    },
  };
}

export type MeetingActivities = ReturnType<typeof createMeetingActivities>;
