import { defineQuery, defineUpdate } from '@temporalio/workflow';

/**
 * One recorder bot per meeting: `meeting-join/<organizationId>/<identityHash>`, started with
 * update-with-start and the use-existing conflict policy, so that every request for a meeting
 * whose recording is still active gets that recording (also when requests race). The meeting's
 * identity (a Meet code, a Teams thread id) lets whoever reads it join, and a workflow id is kept in
 * clear: the id holds a keyed hash of it (`meetingIdentityHash` in src/recordings/meeting-joins.ts).
 */
export const MEETING_JOIN_WORKFLOW = 'meetingJoinWorkflow';

export function meetingJoinWorkflowId(organizationId: string, identityHash: string): string {
  return `meeting-join/${organizationId}/${identityHash}`;
}

export type MeetingPlatformName = 'zoom' | 'google_meet' | 'microsoft_teams' | 'webex';

export interface MeetingJoinInput {
  /** Never read (see MediaIngestionInput.version); new starts leave it out. */
  version?: 1;
  organizationId: string;
  userId: string;
  /** Chosen by the request that started the run; a request that found the run gets the run's. */
  recordingId: string;
  platform: MeetingPlatformName;
  meetingIdentity: string;
  joinUrl: string;
  botName: string;
  /** How often the bot's status is read. */
  pollSeconds: number;
  /** A bot still in the meeting after this long is asked to leave. */
  maxHours: number;
  heartbeatTimeoutSeconds?: number;
  /** Passed on to the media ingestion (see MediaIngestionInput). */
  mediaTaskQueue?: string;
  /** Set by continue-as-new: the bot is in the meeting; this run goes on following it. */
  resume?: MeetingJoinResume;
}

/** What a run carries to the next one when its history grows long (continue-as-new). */
export interface MeetingJoinResume {
  botId: string;
  botState: BotStateName;
  /** Epoch ms: the bot is asked to leave then (maxHours after the first run created it). */
  deadline: number;
  /** Runs so far, this one included. */
  run: number;
}

/** Where a recorder bot is in its lifecycle. */
export type BotStateName = 'joining' | 'waiting_room' | 'in_call' | 'recording' | 'done' | 'failed';

/** Where the finished recording is: a URL the worker downloads (SSRF-safe), or a local file. */
export type BotMedia = { kind: 'url'; url: string } | { kind: 'file'; path: string; contentType: string };

/** A bot's status as the recorder reports it (the `pollBot` activity's result; src/providers/recorder implements it). */
export interface BotStatus {
  state: BotStateName;
  /** `failed`: why (`waiting_room_timeout`, `denied`, `meeting_not_found`, …). */
  reason?: string | null;
  /** `done`: the recording. */
  media?: BotMedia;
}

export interface MeetingJoinResult {
  state: 'done' | 'failed' | 'bot_not_created';
  reason: string | null;
}

/** Resolves once the recorder accepted the bot: the recording's id; fails (`recorder_failed`) when it did not. */
export const botAcceptedUpdate = defineUpdate<{ recordingId: string }>('botAccepted');
/** The recording this run makes and where its bot is. */
export const meetingJoinQuery = defineQuery<{ recordingId: string; botState: BotStateName | 'creating' }>('meetingJoin');
