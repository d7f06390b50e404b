import { z } from 'zod';
import { callProvider, parseJson, ProviderCallError, redact } from '../http.js';
import {
  clip,
  ExtractorError,
  MAX_LABEL_CHARS,
  MAX_LABELS,
  SIGNAL_KINDS,
  type Exchange,
  type ExtractedSignal,
  type SignalExtractor,
  type SignalKind,
} from './types.js';

export interface OpenAiSignalExtractorOptions {
  baseUrl: string;
  apiKey?: string | undefined;
  model: string;
  timeoutMs: number;
  fetch?: typeof fetch;
}

const INSTRUCTIONS = [
  'You extract qualitative signals from one exchange between a user and an AI assistant.',
  'The user message is JSON {"userMessages": [...], "response": "..."}: the user text that led to the assistant response, and that response.',
  'Reply with only a JSON object {"signals": [{"kind": ..., "rating": ..., "summary": ..., "labels": [...]}]}.',
  '"kind" is one of "sentiment" (the user\'s mood), "issue" (a problem the user reports), "request" (a feature or change the user asks for), "praise" (the user is pleased), "topic" (what the exchange is about).',
  '"rating" is "positive", "negative" or null. "summary" is one sentence of at most 500 characters.',
  '"labels" are at most 10 lower-case topics or keywords of at most 64 characters each.',
  'Base sentiment, issue, request and praise on the user text only. Return {"signals": []} when nothing applies.',
].join('\n');

/** The chat-completions envelope; only the first choice's text matters. */
const Completion = z.object({
  choices: z.array(z.object({ message: z.object({ content: z.string() }) })).min(1),
});

/** Lenient per field, so one odd value from the model does not discard the others. */
const Signals = z.object({
  signals: z.array(
    z.object({
      kind: z.string(),
      rating: z.unknown().optional(),
      summary: z.string(),
      labels: z.array(z.string()).optional(),
    }),
  ),
});

/** An adapter for any OpenAI-compatible `/chat/completions` endpoint (OpenAI, vLLM, Ollama, LiteLLM…). */
export class OpenAiSignalExtractor implements SignalExtractor {
  readonly name = 'openai';
  private readonly url: string;
  private readonly fetch: typeof fetch;

  constructor(private readonly options: OpenAiSignalExtractorOptions) {
    this.url = `${options.baseUrl.replace(/(?<!\/)\/+$/, '')}/chat/completions`;
    this.fetch = options.fetch ?? globalThis.fetch;
  }

  async extract(exchange: Exchange, options: { signal?: AbortSignal } = {}): Promise<ExtractedSignal[]> {
    const { apiKey, model, timeoutMs } = this.options;
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (apiKey) headers.authorization = `Bearer ${apiKey}`;
    const body = JSON.stringify({
      model,
      temperature: 0,
      response_format: { type: 'json_object' },
      messages: [
        { role: 'system', content: INSTRUCTIONS },
        { role: 'user', content: JSON.stringify({ userMessages: exchange.userMessages, response: exchange.response }) },
      ],
    });
    let text: string;
    try {
      text = await callProvider(
        { what: 'Signal extraction provider', apiKey, timeoutMs, signal: options.signal, fetch: this.fetch },
        this.url,
        { method: 'POST', headers, body },
      );
    } catch (error) {
      if (error instanceof ProviderCallError) throw new ExtractorError(error.failure.message, error.failure.code, error.failure.retryable);
      throw error;
    }
    return normalize(this.parse(text));
  }

  private parse(text: string): z.infer<typeof Signals> {
    const completion = Completion.safeParse(parseJson(text));
    if (!completion.success)
      throw this.error('Signal extraction provider returned a body that is not a chat completion.', 'invalid_response', true);
    // json_object mode should give bare JSON, but some compatible servers still wrap it in a fence.
    const content = completion.data.choices[0]!.message.content.trim().replace(/^```(?:json)?\s*|(?<!\s)\s*```$/g, '');
    const signals = Signals.safeParse(parseJson(content));
    if (!signals.success)
      throw this.error('Signal extraction provider returned content that is not the expected signals JSON.', 'invalid_response', true);
    return signals.data;
  }

  /** Every message passes through here so the key never leaks, even when a server echoes it back. */
  private error(message: string, code: string, retryable: boolean): ExtractorError {
    const { apiKey } = this.options;
    return new ExtractorError(redact(message, apiKey), code, retryable);
  }
}

function normalize(data: z.infer<typeof Signals>): ExtractedSignal[] {
  const signals: ExtractedSignal[] = [];
  for (const item of data.signals) {
    const kind = item.kind.trim().toLowerCase();
    const summary = item.summary.replace(/\s+/g, ' ').trim();
    if (!isKind(kind) || summary === '') continue;
    const rating = item.rating === 'positive' || item.rating === 'negative' ? item.rating : null;
    const labels = [...new Set((item.labels ?? []).map((l) => clip(l.trim().toLowerCase(), MAX_LABEL_CHARS)).filter((l) => l !== ''))];
    signals.push({ kind, rating, summary: clip(summary), labels: labels.slice(0, MAX_LABELS) });
  }
  return signals;
}

function isKind(kind: string): kind is SignalKind {
  return (SIGNAL_KINDS as readonly string[]).includes(kind);
}
