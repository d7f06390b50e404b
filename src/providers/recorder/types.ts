import type { MeetingPlatform } from '../../domain/meeting-url.js';
import type { BotMedia, BotStateName, BotStatus } from '../../../workflows/meeting-join/contract.js';
import type { FailureType } from '../../domain/failure-types.js';

/**
 * A meeting recorder: a bot that joins a meeting, records it and hands over the media. The
 * meeting-join workflow drives it (create, poll the status, leave); implementations: a built-in
 * local recorder (development and tests) and an adapter for a Recall.ai-style HTTP bot API.
 */
// A bot's status is part of the meeting-join workflow's contract (its `pollBot` activity returns it).
export type { BotMedia, BotStatus };
export type BotState = BotStateName;

export interface MeetingToJoin {
  joinUrl: string;
  platform: MeetingPlatform;
  /** Shown to the meeting's participants. */
  botName: string;
}

export interface Recorder {
  readonly name: string;
  /**
   * `idempotencyKey`: a retry with the same key gets the bot the first call made, also when that
   * call's answer was lost (a timeout after the provider created it): never a second bot.
   */
  createBot(meeting: MeetingToJoin, options?: { signal?: AbortSignal; idempotencyKey?: string }): Promise<{ botId: string }>;
  botStatus(botId: string, options?: { signal?: AbortSignal }): Promise<BotStatus>;
  /** Asks the bot to leave (the meeting-join was abandoned); a bot already gone is fine. */
  leave(botId: string, options?: { signal?: AbortSignal }): Promise<void>;
}

/** A recorder failure; `retryable` ones are tried again by Temporal. */
export class RecorderError extends Error {
  override name = 'RecorderError';
  constructor(
    message: string,
    readonly code: FailureType,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}
