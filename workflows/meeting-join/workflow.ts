import {
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  CancellationScope,
  condition,
  ContinueAsNew,
  continueAsNew,
  executeChild,
  isCancellation,
  ParentClosePolicy,
  patched,
  proxyActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { MeetingActivities } from '../../activities/meeting-joins.js';
import type { BotStatus } from '../../src/providers/recorder/types.js';
import { FailureType } from '../failure-types.js';
import { mediaIngestionWorkflow } from '../media-ingestion/workflow.js';
import { mediaIngestionWorkflowId } from '../media-ingestion/contract.js';
import { ORGANIZATION_ID, RECORDING_ID, STATUS } from '../search-attributes.js';
import { botAcceptedUpdate, meetingJoinQuery, type BotStateName, type MeetingJoinInput, type MeetingJoinResult } from './contract.js';

const db = proxyActivities<MeetingActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});
// The request waits for the bot: a few quick attempts, then the failure is the caller's 502.
const create = proxyActivities<MeetingActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 3 },
});
// Status reads ride out a provider's bad minutes; a meeting lasts hours.
const poll = proxyActivities<MeetingActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '5 seconds', maximumInterval: '5 minutes', maximumAttempts: 30 },
});
// Leaving on the way out: a few tries, then the run ends anyway.
const leave = proxyActivities<MeetingActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '5 seconds', maximumInterval: '1 minute', maximumAttempts: 5 },
});

function failureMessage(error: unknown): string {
  if (error instanceof ActivityFailure && error.cause) return error.cause.message;
  return error instanceof Error ? error.message : String(error);
}

/** Polls per run before continue-as-new: about 11 history events each, so a run stays near 11,000 events. */
export const POLLS_PER_RUN = 1000;
/** New runs follow the bot across continue-as-new and end with the recording terminal and the bot gone. */
export const BOUNDED_HISTORY_PATCH = 'meeting-join-bounded-history';

/**
 * A recorder bot for one meeting: the recording is created, the bot asked for (the request is
 * answered once the recorder accepted it, or with its failure, leaving nothing behind), its
 * lifecycle followed (shown as `IntakeStatus` and on the recording), its media handed to
 * `media-ingestion/<recordingId>` (a child that also transcribes it), and the run ends with it.
 * The history stays bounded: every POLLS_PER_RUN polls the run continues as new with the bot. Every
 * way it ends leaves the recording terminal and the bot gone (polling that exhausts its retries and
 * cancellation included).
 */
export async function meetingJoinWorkflow(input: MeetingJoinInput): Promise<MeetingJoinResult> {
  // Runs started before the patch replay as they were recorded.
  const bounded = patched(BOUNDED_HISTORY_PATCH);
  const resume = input.resume;
  let accepted: { recordingId: string } | { error: string } | undefined = resume ? { recordingId: input.recordingId } : undefined;
  let botState: BotStateName | 'creating' = resume?.botState ?? 'creating';
  setHandler(botAcceptedUpdate, async () => {
    await condition(() => accepted !== undefined);
    if (accepted && 'error' in accepted)
      throw ApplicationFailure.create({ type: FailureType.recorderFailed, message: accepted.error, nonRetryable: true });
    return { recordingId: input.recordingId };
  });
  setHandler(meetingJoinQuery, () => ({ recordingId: input.recordingId, botState }));
  const show = (state: string) => upsertSearchAttributes([{ key: STATUS, value: state }]);
  const finish = async (result: MeetingJoinResult) => {
    await condition(allHandlersFinished);
    return result;
  };

  let botId: string;
  let deadline: number;
  if (resume) {
    botId = resume.botId;
    deadline = resume.deadline;
  } else {
    await db.createMeetingRecording(input);
    show('creating_bot');
    try {
      botId = (await create.createBot(input.recordingId, { joinUrl: input.joinUrl, platform: input.platform, botName: input.botName }))
        .botId;
    } catch (error) {
      await db.discardMeetingRecording(input.recordingId);
      accepted = { error: failureMessage(error) };
      show('bot_not_created');
      return finish({ state: 'bot_not_created', reason: accepted.error });
    }
    accepted = { recordingId: input.recordingId };
    deadline = Date.now() + input.maxHours * 3600_000;
  }

  /** The bot leaves (if it can be reached) and the recording fails: nothing is left waiting. */
  const abandon = async (reason: string) => {
    await CancellationScope.nonCancellable(async () => {
      try {
        await leave.leaveBot(botId);
      } catch {
        // The recorder is unreachable: its bot leaves on its own when the meeting ends.
      }
      await db.failMeeting(input.recordingId, reason);
      show('failed');
    });
  };

  let status: BotStatus;
  let polls = 0;
  try {
    status = await poll.pollBot(input.recordingId, botId);
    for (;;) {
      if (status.state !== botState) {
        botState = status.state;
        show(botState);
      }
      if (status.state === 'done' || status.state === 'failed') break;
      if (Date.now() >= deadline) {
        await poll.leaveBot(botId);
        status = { state: 'failed', reason: 'max_duration' };
        continue;
      }
      if (bounded && ++polls >= POLLS_PER_RUN) {
        await condition(allHandlersFinished);
        return await continueAsNew<typeof meetingJoinWorkflow>({
          ...input,
          resume: { botId, botState: status.state, deadline, run: (resume?.run ?? 1) + 1 },
        });
      }
      await sleep(`${input.pollSeconds} seconds`);
      status = await poll.pollBot(input.recordingId, botId);
    }
  } catch (error) {
    if (!bounded || error instanceof ContinueAsNew) throw error;
    if (isCancellation(error)) {
      await abandon('cancelled');
      throw error;
    }
    // Polling (or leaving) exhausted its retries: the recorder is gone for good.
    await abandon('recorder_unreachable');
    return finish({ state: 'failed', reason: 'recorder_unreachable' });
  }
  if (status.state === 'failed' || !status.media) {
    const reason = status.reason ?? 'no_recording';
    await db.failMeeting(input.recordingId, reason);
    return finish({ state: 'failed', reason });
  }

  // The media goes through the same ingestion as any recording's (it also transcribes).
  const handOff = await db.handOffMedia(input.recordingId, status.media);
  show('processing_media');
  await executeChild(mediaIngestionWorkflow, {
    workflowId: mediaIngestionWorkflowId(input.recordingId),
    args: [
      {
        version: 1,
        organizationId: input.organizationId,
        recordingId: input.recordingId,
        ingestionId: handOff.ingestionId,
        kind: handOff.kind,
        ...(input.heartbeatTimeoutSeconds ? { heartbeatTimeoutSeconds: input.heartbeatTimeoutSeconds } : {}),
        ...(input.mediaTaskQueue ? { mediaTaskQueue: input.mediaTaskQueue } : {}),
      },
    ],
    parentClosePolicy: ParentClosePolicy.ABANDON,
    typedSearchAttributes: [
      { key: ORGANIZATION_ID, value: input.organizationId },
      { key: RECORDING_ID, value: input.recordingId },
      { key: STATUS, value: handOff.kind === 'url' ? 'queued' : 'waiting' },
    ],
  });
  show('done');
  return finish({ state: 'done', reason: null });
}
