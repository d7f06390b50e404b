import type { BotMedia, BotStateName, BotStatus, MeetingJoinInput, MeetingJoinResume } from './contract.js';

/** Polls per run before continue-as-new: about 11 history events each, so a run stays near 11,000 events. */
export const POLLS_PER_RUN = 1000;

/** What the workflow does after a status read. */
export type PollStep =
  /** The bot is `done` or `failed`: stop polling. */
  | 'ended'
  /** Past the deadline: ask the bot to leave, then treat it as failed (`max_duration`). */
  | 'leave'
  /** The run polled POLLS_PER_RUN times: continue as new with the bot. */
  | 'continue_as_new'
  /** Sleep `pollSeconds`, then read again. */
  | 'wait';

/**
 * The meeting-join workflow's state, pure (no Temporal API): whether the recorder accepted the bot
 * (what the `botAccepted` update answers), where the bot is (what the query and `IntakeStatus`
 * show), and what to do after each status read.
 */
export class MeetingJoinState {
  #accepted: { recordingId: string } | { error: string } | undefined;
  #botState: BotStateName | 'creating';
  #polls = 0;

  constructor(readonly input: MeetingJoinInput) {
    // A continued run's bot was accepted by an earlier run.
    this.#accepted = input.resume ? { recordingId: input.recordingId } : undefined;
    this.#botState = input.resume?.botState ?? 'creating';
  }

  get botState(): BotStateName | 'creating' {
    return this.#botState;
  }

  /** The recorder answered (accepted the bot or failed to create it): the update may answer. */
  get answered(): boolean {
    return this.#accepted !== undefined;
  }

  /** The update's answer, once `answered`: the recording, or the recorder's failure. */
  answer(): { recordingId: string } | { error: string } {
    if (!this.#accepted) throw new Error('the recorder has not answered yet');
    return this.#accepted;
  }

  /** The `meetingJoin` query's answer. */
  view(): { recordingId: string; botState: BotStateName | 'creating' } {
    return { recordingId: this.input.recordingId, botState: this.#botState };
  }

  botCreated(): void {
    this.#accepted = { recordingId: this.input.recordingId };
  }

  botNotCreated(error: string): void {
    this.#accepted = { error };
  }

  /** Epoch ms at which a bot created at `now` is asked to leave. */
  deadlineFrom(now: number): number {
    return now + this.input.maxHours * 3600_000;
  }

  /** A status read: true when the bot's state changed (and is to be shown). */
  observe(status: BotStatus): boolean {
    if (status.state === this.#botState) return false;
    this.#botState = status.state;
    return true;
  }

  /** What to do after reading `status` at `now`; `bounded`: runs continue as new (the patch is in). */
  next(status: BotStatus, o: { now: number; deadline: number; bounded: boolean }): PollStep {
    if (status.state === 'done' || status.state === 'failed') return 'ended';
    if (o.now >= o.deadline) return 'leave';
    if (o.bounded && ++this.#polls >= POLLS_PER_RUN) return 'continue_as_new';
    return 'wait';
  }

  /** What the next run carries (continue-as-new). */
  resume(botId: string, status: BotStatus, deadline: number): MeetingJoinResume {
    return { botId, botState: status.state, deadline, run: (this.input.resume?.run ?? 1) + 1 };
  }
}

/** How a bot's lifecycle ended: its media to ingest, or why the recording failed. */
export function endingOf(status: BotStatus): { media: BotMedia } | { failed: string } {
  if (status.state === 'failed' || !status.media) return { failed: status.reason ?? 'no_recording' };
  return { media: status.media };
}
