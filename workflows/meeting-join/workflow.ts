import {
  ActivityFailure, allHandlersFinished, ApplicationFailure, condition, executeChild, ParentClosePolicy, proxyActivities, setHandler, sleep,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { MeetingActivities } from '../../activities/meeting-joins.js';
import { mediaIngestionWorkflow } from '../media-ingestion/workflow.js';
import { mediaIngestionWorkflowId } from '../media-ingestion/contract.js';
import { ORGANIZATION_ID, RECORDING_ID, STATUS } from '../search-attributes.js';
import { botAcceptedUpdate, meetingJoinQuery, type BotStateName, type MeetingJoinInput, type MeetingJoinResult } from './contract.js';

const db = proxyActivities<MeetingActivities>({ startToCloseTimeout: '1 minute', retry: { initialInterval: '1 second', maximumInterval: '1 minute' } });
// The request waits for the bot: a few quick attempts, then the failure is the caller's 502.
const create = proxyActivities<MeetingActivities>({
  startToCloseTimeout: '30 seconds', retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 3 },
});
// Status reads ride out a provider's bad minutes; a meeting lasts hours.
const poll = proxyActivities<MeetingActivities>({
  startToCloseTimeout: '1 minute', retry: { initialInterval: '5 seconds', maximumInterval: '5 minutes', maximumAttempts: 30 },
});

function failureMessage(error: unknown): string {
  if (error instanceof ActivityFailure && error.cause) return error.cause.message;
  return error instanceof Error ? error.message : String(error);
}

/**
 * A recorder bot for one meeting: the recording is created, the bot asked for (the request is
 * answered once the recorder accepted it, or with its failure, leaving nothing behind), its
 * lifecycle followed (shown as `IntakeStatus` and on the recording), its media handed to
 * `media-ingestion/<recordingId>` (a child that also transcribes it), and the run ends with it.
 */
export async function meetingJoinWorkflow(input: MeetingJoinInput): Promise<MeetingJoinResult> {
  let accepted: { recordingId: string } | { error: string } | undefined;
  let botState: BotStateName | 'creating' = 'creating';
  setHandler(botAcceptedUpdate, async () => {
    await condition(() => accepted !== undefined);
    if (accepted && 'error' in accepted) throw ApplicationFailure.create({ type: 'recorder_failed', message: accepted.error, nonRetryable: true });
    return { recordingId: input.recordingId };
  });
  setHandler(meetingJoinQuery, () => ({ recordingId: input.recordingId, botState }));
  const show = (state: string) => upsertSearchAttributes([{ key: STATUS, value: state }]);
  const finish = async (result: MeetingJoinResult) => {
    await condition(allHandlersFinished);
    return result;
  };

  await db.createMeetingRecording(input);
  show('creating_bot');
  let botId: string;
  try {
    botId = (await create.createBot(input.recordingId, { joinUrl: input.joinUrl, platform: input.platform, botName: input.botName })).botId;
  } catch (error) {
    await db.discardMeetingRecording(input.recordingId);
    accepted = { error: failureMessage(error) };
    show('bot_not_created');
    return finish({ state: 'bot_not_created', reason: accepted.error });
  }
  accepted = { recordingId: input.recordingId };

  const deadline = Date.now() + input.maxHours * 3600_000;
  let status = await poll.pollBot(input.recordingId, botId);
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
    await sleep(`${input.pollSeconds} seconds`);
    status = await poll.pollBot(input.recordingId, botId);
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
    args: [{ version: 1, organizationId: input.organizationId, recordingId: input.recordingId, ingestionId: handOff.ingestionId, kind: handOff.kind,
      ...(input.heartbeatTimeoutSeconds ? { heartbeatTimeoutSeconds: input.heartbeatTimeoutSeconds } : {}),
      ...(input.mediaTaskQueue ? { mediaTaskQueue: input.mediaTaskQueue } : {}) }],
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
