import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { DatabasePool, DatabaseTransactionConnection } from 'slonik';
import {
  clearBotRetry,
  endBot,
  failMeetingRecording,
  insertMeetingRecording,
  noteBotRetry,
  setBot,
} from '../db/repositories/meeting-joins.js';
import { failureMessage } from '../domain/failure-messages.js';
import { retryDelayMs, type StepAttempt } from '../domain/retry-backoff.js';
import { insertIngestion, insertUpload, latestIngestion } from '../db/repositories/media-ingestions.js';
import { deleteMeetingRecording, recordingOrganization, setAssetStatus } from '../db/repositories/recordings.js';
import { NotFoundError } from '../errors.js';
import type { UploadStore } from '../media/upload-store.js';
import { RecorderError, type BotMedia, type BotStatus, type MeetingToJoin, type Recorder } from '../providers/recorder/types.js';
import type { MeetingJoinInput } from '../../workflows/meeting-join/contract.js';

/*
 * The worker's side of a meeting join (the meeting-join workflow's steps): the recording and its
 * join row, the recorder's bot, and the bot's media handed to the recording's media ingestion.
 * Recorder failures surface as the recorder's own RecorderError.
 */

export interface MeetingBotDeps {
  pool: DatabasePool;
  recorder: Recorder;
  uploadStore: UploadStore;
}

export async function createMeetingRecording(deps: MeetingBotDeps, input: MeetingJoinInput): Promise<void> {
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
}

/** The recording id is the idempotency key: a retry after a lost answer gets the same bot, not a second one. */
export async function createBot(deps: MeetingBotDeps, recordingId: string, meeting: MeetingToJoin): Promise<{ botId: string }> {
  const { botId } = await deps.recorder.createBot(meeting, { idempotencyKey: recordingId });
  await setBot(deps.pool, recordingId, { botId, state: 'joining' });
  return { botId };
}

/** The recorder could not create the bot: the recording goes, nothing active is left behind. */
export async function discardMeetingRecording(deps: Pick<MeetingBotDeps, 'pool'>, recordingId: string): Promise<void> {
  await deleteMeetingRecording(deps.pool, recordingId);
}

/** The bot's state, recorded on the meeting join while it is under way (its end is recorded by the step that follows). */
export async function pollBot(deps: MeetingBotDeps, recordingId: string, botId: string): Promise<BotStatus> {
  const status = await deps.recorder.botStatus(botId);
  if (status.state !== 'failed' && status.state !== 'done') await setBot(deps.pool, recordingId, { state: status.state });
  else await clearBotRetry(deps.pool, recordingId);
  return status;
}

/**
 * A recorder call of the join failed (creating the bot, reading its status): when it will be tried
 * again, the join shows why (the catalogued message of the recorder's code, never its own text), the
 * attempt and when the next one starts. Other failures are internal and shown as nothing. Best
 * effort: a failed write never hides the call's error.
 */
export async function noteRecorderFailure(
  deps: Pick<MeetingBotDeps, 'pool'>,
  recordingId: string,
  error: unknown,
  at: StepAttempt,
): Promise<void> {
  if (!(error instanceof RecorderError) || !error.retryable || !at.policy) return;
  const delayMs = retryDelayMs(at.policy, at.attempt);
  if (delayMs === null) return;
  await noteBotRetry(deps.pool, recordingId, {
    errorCode: error.code,
    message: failureMessage(error.code),
    attempt: at.attempt,
    delayMs,
  }).catch(() => undefined);
}

export async function failMeeting(deps: Pick<MeetingBotDeps, 'pool'>, recordingId: string, reason: string): Promise<void> {
  await deps.pool.transaction((tx) => failMeetingRecording(tx, recordingId, reason));
}

export interface MediaHandOff {
  ingestionId: string;
  kind: 'url' | 'upload';
}

/**
 * The bot is done and its recording becomes the recording's media ingestion, in one transaction
 * (the join's end is announced with it). A retry finds the ingestion it made.
 */
export async function recordMediaHandOff(
  tx: DatabaseTransactionConnection,
  h: { recordingId: string; media: { kind: 'url' } | { kind: 'file'; fileName: string; fileSize: number }; createdBy: string },
): Promise<MediaHandOff> {
  // The recording's lock serializes hand-offs of one recording (a retry racing a late first attempt).
  const organizationId = await recordingOrganization(tx, h.recordingId, true);
  if (!organizationId) throw new NotFoundError('Recording');
  const existing = await latestIngestion(tx, h.recordingId);
  await endBot(tx, h.recordingId, { state: 'done' });
  if (h.media.kind === 'url') {
    if (existing) return { ingestionId: existing.id, kind: existing.kind };
    const ingestionId = randomUUID();
    // The URL is not stored: the transfer asks the recorder for a current one.
    await setAssetStatus(tx, h.recordingId, 'queued');
    await insertIngestion(tx, { id: ingestionId, organizationId, recordingId: h.recordingId, kind: 'url' });
    return { ingestionId, kind: 'url' };
  }
  if (existing) return { ingestionId: existing.id, kind: 'upload' };
  const ingestionId = randomUUID();
  await insertUpload(tx, {
    id: ingestionId,
    organizationId,
    recordingId: h.recordingId,
    fileName: h.media.fileName,
    fileSize: h.media.fileSize,
    folderId: null,
    batchId: null,
    inMobileApp: false,
    createdBy: h.createdBy,
    origin: null,
    timeoutSeconds: 3600,
  });
  return { ingestionId, kind: 'upload' };
}

/**
 * The bot's recording becomes the recording's media ingestion: a URL the worker transfers
 * (SSRF-safe, like `assetUrl`), or a local file put into the upload store as a complete upload.
 * The database changes commit together first; the file's bytes follow (again on a retry, unless
 * they are all there).
 */
export async function handOffMedia(deps: MeetingBotDeps, recordingId: string, media: BotMedia): Promise<MediaHandOff> {
  const size = media.kind === 'file' ? (await stat(media.path)).size : 0;
  const handOff = await deps.pool.transaction((tx) =>
    recordMediaHandOff(tx, {
      recordingId,
      media: media.kind === 'url' ? { kind: 'url' } : { kind: 'file', fileName: path.basename(media.path), fileSize: size },
      createdBy: `recorder:${deps.recorder.name}`,
    }),
  );
  if (media.kind === 'url') return handOff;
  const progress = await deps.uploadStore.progress(handOff.ingestionId);
  if (!progress || progress.offset !== size) {
    await deps.uploadStore.remove(handOff.ingestionId);
    await deps.uploadStore.create(handOff.ingestionId, size);
    await deps.uploadStore.datastore.write(createReadStream(media.path), handOff.ingestionId, 0);
  }
  return handOff;
}
