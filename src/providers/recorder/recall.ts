import { z } from 'zod';
import { callProvider, parseJson, ProviderCallError } from '../http.js';
import { RecorderError, type BotState, type BotStatus, type MeetingToJoin, type Recorder } from './types.js';

export interface RecallRecorderOptions {
  /** e.g. `https://us-east-1.recall.ai` */
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
  fetch?: typeof fetch;
}

const Created = z.object({ id: z.string().min(1) });
const Bot = z.object({
  status_changes: z.array(z.object({ code: z.string(), sub_code: z.string().nullable().optional() })).default([]),
  video_url: z.string().nullable().optional(),
  recordings: z
    .array(
      z.object({
        media_shortcuts: z
          .object({
            video_mixed: z
              .object({ data: z.object({ download_url: z.string().nullable().optional() }).nullable().optional() })
              .nullable()
              .optional(),
            audio_mixed: z
              .object({ data: z.object({ download_url: z.string().nullable().optional() }).nullable().optional() })
              .nullable()
              .optional(),
          })
          .nullable()
          .optional(),
      }),
    )
    .optional(),
});

/** Recall.ai's status codes, read as the bot lifecycle. */
const STATES: Record<string, BotState> = {
  ready: 'joining',
  joining_call: 'joining',
  in_waiting_room: 'waiting_room',
  in_call_not_recording: 'in_call',
  recording_permission_allowed: 'in_call',
  in_call_recording: 'recording',
  // The call is over but the recording is still being prepared.
  call_ended: 'recording',
  recording_done: 'recording',
  done: 'done',
  analysis_done: 'done',
  fatal: 'failed',
  recording_permission_denied: 'failed',
};

/**
 * An adapter for a Recall.ai-style bot API: `POST /api/v1/bot/` creates a bot for a meeting URL,
 * `GET /api/v1/bot/{id}/` gives its status changes and, once done, the recording's download URL,
 * `POST /api/v1/bot/{id}/leave_call/` makes it leave. `Authorization: Token <key>`.
 */
export class RecallRecorder implements Recorder {
  readonly name = 'recall';
  private readonly base: string;

  constructor(private readonly options: RecallRecorderOptions) {
    this.base = `${options.baseUrl.replace(/(?<!\/)\/+$/, '')}/api/v1/bot`;
  }

  /** Recall's `Idempotency-Key`: a repeated POST with the key gets the first answer back. */
  async createBot(meeting: MeetingToJoin, o: { signal?: AbortSignal; idempotencyKey?: string } = {}): Promise<{ botId: string }> {
    const text = await this.call(
      `${this.base}/`,
      {
        method: 'POST',
        body: JSON.stringify({ meeting_url: meeting.joinUrl, bot_name: meeting.botName }),
        ...(o.idempotencyKey ? { headers: { 'Idempotency-Key': o.idempotencyKey } } : {}),
      },
      o.signal,
    );
    const created = Created.safeParse(parseJson(text));
    if (!created.success) throw new RecorderError('Recorder provider returned a bot without an id.', 'invalid_response', true);
    return { botId: created.data.id };
  }

  async botStatus(botId: string, o: { signal?: AbortSignal } = {}): Promise<BotStatus> {
    const text = await this.call(`${this.base}/${encodeURIComponent(botId)}/`, { method: 'GET' }, o.signal);
    const bot = Bot.safeParse(parseJson(text));
    if (!bot.success) throw new RecorderError('Recorder provider returned a bot that could not be read.', 'invalid_response', true);
    const last = bot.data.status_changes.at(-1);
    const state = (last && STATES[last.code]) ?? 'joining';
    if (state === 'failed') return { state, reason: last?.sub_code ?? last?.code ?? 'fatal' };
    if (state !== 'done') return { state };
    const shortcuts = bot.data.recordings?.[0]?.media_shortcuts;
    const url = shortcuts?.video_mixed?.data?.download_url ?? shortcuts?.audio_mixed?.data?.download_url ?? bot.data.video_url ?? null;
    return url ? { state, media: { kind: 'url', url } } : { state: 'failed', reason: 'no_recording' };
  }

  async leave(botId: string, o: { signal?: AbortSignal } = {}): Promise<void> {
    try {
      await this.call(`${this.base}/${encodeURIComponent(botId)}/leave_call/`, { method: 'POST' }, o.signal);
    } catch (error) {
      // Already gone (not in a call, or no such bot): nothing to leave.
      if (error instanceof RecorderError && error.code === 'provider_rejected') return;
      throw error;
    }
  }

  private async call(url: string, init: RequestInit, signal: AbortSignal | undefined): Promise<string> {
    const headers = {
      authorization: `Token ${this.options.apiKey}`,
      'content-type': 'application/json',
      accept: 'application/json',
      ...(init.headers as Record<string, string> | undefined),
    };
    try {
      return await callProvider(
        { what: 'Recorder provider', apiKey: this.options.apiKey, timeoutMs: this.options.timeoutMs, signal, fetch: this.options.fetch },
        url,
        { ...init, headers },
      );
    } catch (error) {
      if (error instanceof ProviderCallError) throw new RecorderError(error.failure.message, error.failure.code, error.failure.retryable);
      throw error;
    }
  }
}
