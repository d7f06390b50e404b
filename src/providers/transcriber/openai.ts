import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import type { Utterance } from '../../domain/transcript.js';
import { FfmpegTools } from '../../media/ffmpeg-tools.js';
import { callProvider, parseJson, ProviderCallError } from '../http.js';
import { extractSpeech, TranscriberError, type Transcriber } from './types.js';

export interface OpenAiTranscriberOptions {
  baseUrl: string;
  apiKey?: string | undefined;
  /** `whisper-1`, `gpt-4o-transcribe`, or what a compatible server (faster-whisper-server, LocalAI, vLLM) serves. */
  model: string;
  timeoutMs: number;
  fetch?: typeof fetch;
  /** The FFmpeg that reduces the media to speech audio (default: the pinned build under `.tools`). */
  ffmpeg?: FfmpegTools;
}

/** Hosted APIs take at most 25 MB; speech needs little: mono, 16 kHz, 32 kb/s MP3 is ~1.7 hours in 25 MB. */
const MAX_UPLOAD_BYTES = 25 * 1024 * 1024;
const MAX_TEXT = 20_000;

/** `verbose_json` (segments with times) or a diarized answer (segments with speakers); `text` alone is enough. */
const Answer = z.object({
  text: z.string().optional(),
  duration: z.number().optional(),
  segments: z
    .array(
      z.object({
        start: z.number(),
        end: z.number(),
        text: z.string(),
        speaker: z.union([z.string(), z.number()]).optional(),
      }),
    )
    .optional(),
});

/**
 * An adapter for any OpenAI-compatible `POST /audio/transcriptions` endpoint. The media is first
 * reduced to compact speech audio, then sent as multipart form data asking for `verbose_json`;
 * segments become utterances in time order, speakers numbered in order of appearance (0 when the
 * engine does not tell speakers apart).
 */
export class OpenAiTranscriber implements Transcriber {
  readonly name = 'openai';
  private readonly url: string;

  constructor(private readonly options: OpenAiTranscriberOptions) {
    this.url = `${options.baseUrl.replace(/(?<!\/)\/+$/, '')}/audio/transcriptions`;
  }

  async transcribe(mediaFile: string, options: { signal?: AbortSignal } = {}): Promise<Utterance[]> {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'intake-transcribe-'));
    try {
      const speech = path.join(dir, 'speech.mp3');
      await extractSpeech(this.options.ffmpeg ?? new FfmpegTools(), mediaFile, speech, 'mp3', options.signal);
      const audio = await readFile(speech);
      if (audio.length > MAX_UPLOAD_BYTES) {
        throw new TranscriberError(
          `the speech audio is ${audio.length} bytes; the provider takes at most ${MAX_UPLOAD_BYTES}`,
          'media_too_long',
          false,
        );
      }
      const form = new FormData();
      form.set('file', new Blob([audio], { type: 'audio/mpeg' }), 'speech.mp3');
      form.set('model', this.options.model);
      form.set('response_format', 'verbose_json');
      form.append('timestamp_granularities[]', 'segment');
      const headers: Record<string, string> = { accept: 'application/json' };
      if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
      let text: string;
      try {
        text = await callProvider(
          {
            what: 'Transcription provider',
            apiKey: this.options.apiKey,
            timeoutMs: this.options.timeoutMs,
            signal: options.signal,
            fetch: this.options.fetch,
          },
          this.url,
          { method: 'POST', headers, body: form },
        );
      } catch (error) {
        if (error instanceof ProviderCallError)
          throw new TranscriberError(error.failure.message, error.failure.code, error.failure.retryable);
        throw error;
      }
      return toUtterances(text);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}

function toUtterances(body: string): Utterance[] {
  const answer = Answer.safeParse(parseJson(body));
  if (!answer.success)
    throw new TranscriberError('Transcription provider returned a body that is not a transcription.', 'invalid_response', true);
  const { segments, text, duration } = answer.data;
  if (!segments?.length) {
    const whole = (text ?? '').replace(/\s+/g, ' ').trim();
    return whole ? [{ startSec: 0, endSec: duration ?? 0, speaker: 0, text: whole.slice(0, MAX_TEXT) }] : [];
  }
  const speakers = new Map<string, number>();
  const speakerOf = (label: string | number | undefined) => {
    if (label === undefined) return 0;
    const key = String(label);
    if (!speakers.has(key)) speakers.set(key, speakers.size);
    return speakers.get(key) ?? 0;
  };
  return segments
    .map((s) => ({ s, text: s.text.replace(/\s+/g, ' ').trim() }))
    .filter(({ text: t }) => t !== '')
    .sort((a, b) => a.s.start - b.s.start)
    .map(({ s, text: t }) => {
      const startSec = Math.max(0, s.start);
      return { startSec, endSec: Math.max(startSec, s.end), speaker: speakerOf(s.speaker), text: t.slice(0, MAX_TEXT) };
    });
}
