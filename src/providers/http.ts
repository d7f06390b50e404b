/**
 * What the HTTP adapters of outside providers (signal extraction, transcription, recorder bots)
 * share: one call with a timeout and the caller's cancellation, and one reading of failures
 * (retryable or not, with a stable code). Messages never carry the API key, even when a server
 * echoes it back.
 */
export interface ProviderFailure {
  message: string;
  code: 'provider_unreachable' | 'provider_unauthorized' | 'provider_unavailable' | 'provider_rejected' | 'invalid_response';
  retryable: boolean;
}

export interface ProviderCall {
  /** Named in messages: "Transcription provider", "Recorder provider"… */
  what: string;
  apiKey?: string | undefined;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  fetch?: typeof fetch;
}

/** Thrown by `callProvider`; adapters turn it into their own error type with `toError`. */
export class ProviderCallError extends Error {
  constructor(readonly failure: ProviderFailure) {
    super(failure.message);
  }
}

export function redact(message: string, apiKey: string | undefined): string {
  return apiKey ? message.replaceAll(apiKey, '[redacted]') : message;
}

/** At most `max` characters, an ellipsis marking the cut, never half a surrogate pair. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 1);
  return `${/[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut}…`;
}

/** Names the low-level cause (e.g. ECONNREFUSED) that fetch hides behind "fetch failed". */
function describe(error: unknown): string {
  const cause = error instanceof Error ? (error.cause ?? error) : error;
  if (cause instanceof Error) return 'code' in cause && typeof cause.code === 'string' ? cause.code : cause.message;
  return String(cause);
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** An HTTP status other than 2xx, read as the providers' APIs use them. */
export function httpFailure(call: Pick<ProviderCall, 'what' | 'apiKey'>, status: number, body: string): ProviderFailure {
  const excerpt = clip(body.replace(/\s+/g, ' ').trim(), 200);
  const message = redact(`${call.what} answered HTTP ${status}${excerpt ? `: ${excerpt}` : '.'}`, call.apiKey);
  if (status === 401 || status === 403) return { message, code: 'provider_unauthorized', retryable: false };
  if (status === 408 || status === 409 || status === 429 || status >= 500)
    return { message, code: 'provider_unavailable', retryable: true };
  if (status >= 400) return { message, code: 'provider_rejected', retryable: false };
  return { message, code: 'invalid_response', retryable: true };
}

/**
 * One request: the body text of a 2xx answer, or a `ProviderCallError` (unreachable, timed out,
 * an HTTP failure). A cancelled caller is not a provider failure: its reason is thrown as it is.
 */
export async function callProvider(call: ProviderCall, url: string, init: RequestInit): Promise<string> {
  const timeout = AbortSignal.timeout(call.timeoutMs);
  const signal = call.signal ? AbortSignal.any([timeout, call.signal]) : timeout;
  let status: number;
  let text: string;
  try {
    const response = await (call.fetch ?? globalThis.fetch)(url, { ...init, signal });
    status = response.status;
    text = await response.text();
  } catch (error) {
    if (call.signal?.aborted) throw call.signal.reason;
    const message = timeout.aborted
      ? `${call.what} did not answer within ${call.timeoutMs} ms.`
      : `${call.what} is unreachable (${describe(error)}).`;
    throw new ProviderCallError({ message: redact(message, call.apiKey), code: 'provider_unreachable', retryable: true });
  }
  if (status < 200 || status > 299) throw new ProviderCallError(httpFailure(call, status, text));
  return text;
}
