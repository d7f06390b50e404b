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
import { mediaIngestionStart } from '../../src/domain/media-ingestion-start.js';
import { FailureType } from '../../src/domain/failure-types.js';
import { mediaIngestionWorkflow } from '../media-ingestion/workflow.js';
import { STATUS } from '../search-attributes.js';
import { botAcceptedUpdate, meetingJoinQuery, type BotStatus, type MeetingJoinInput, type MeetingJoinResult } from './contract.js';
import { endingOf, MeetingJoinState } from './state.js';

export { POLLS_PER_RUN } from './state.js';

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
  const state = new MeetingJoinState(input);
  setHandler(botAcceptedUpdate, async () => {
    await condition(() => state.answered);
    const answer = state.answer();
    if ('error' in answer) throw ApplicationFailure.create({ type: FailureType.recorderFailed, message: answer.error, nonRetryable: true });
    return answer;
  });
  setHandler(meetingJoinQuery, () => state.view());
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
      const reason = failureMessage(error);
      state.botNotCreated(reason);
      show('bot_not_created');
      return finish({ state: 'bot_not_created', reason });
    }
    state.botCreated();
    deadline = state.deadlineFrom(Date.now());
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
  try {
    status = await poll.pollBot(input.recordingId, botId);
    for (;;) {
      if (state.observe(status)) show(status.state);
      const step = state.next(status, { now: Date.now(), deadline, bounded });
      if (step === 'ended') break;
      if (step === 'leave') {
        await poll.leaveBot(botId);
        status = { state: 'failed', reason: 'max_duration' };
        continue;
      }
      if (step === 'continue_as_new') {
        await condition(allHandlersFinished);
        return await continueAsNew<typeof meetingJoinWorkflow>({ ...input, resume: state.resume(botId, status, deadline) });
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
  const ending = endingOf(status);
  if ('failed' in ending) {
    await db.failMeeting(input.recordingId, ending.failed);
    return finish({ state: 'failed', reason: ending.failed });
  }

  // The media goes through the same ingestion as any recording's (it also transcribes).
  const handOff = await db.handOffMedia(input.recordingId, ending.media);
  show('processing_media');
  // Started as the API starts it (same id, input and search attributes), on this run's task queue.
  const child = mediaIngestionStart(
    { organizationId: input.organizationId, recordingId: input.recordingId, ingestionId: handOff.ingestionId, kind: handOff.kind },
    {
      ...(input.heartbeatTimeoutSeconds ? { heartbeatTimeoutSeconds: input.heartbeatTimeoutSeconds } : {}),
      ...(input.mediaTaskQueue ? { mediaTaskQueue: input.mediaTaskQueue } : {}),
    },
  );
  await executeChild(mediaIngestionWorkflow, {
    workflowId: child.workflowId,
    args: child.args,
    parentClosePolicy: ParentClosePolicy.ABANDON,
    typedSearchAttributes: child.typedSearchAttributes,
  });
  show('done');
  return finish({ state: 'done', reason: null });
}
