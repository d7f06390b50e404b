import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { paths } from './schema.js';

/** A client of the Intake API: openapi-fetch over the types generated from openapi/intake.openapi.json. */
export type IntakeClient = Client<paths, 'application/json'>;

export interface IntakeClientOptions {
  /** Where the API is, e.g. `https://intake.example.com` or `http://localhost:8080` (no trailing `/v3`). */
  baseUrl: string;
  /** An organization API key (`ik_…`), sent as `X-Service-Api-Key`. */
  apiKey?: string;
  /** A user access token, sent as `Authorization: Bearer …`. */
  accessToken?: string;
  /** An agent application's ingest secret, sent as `X-Service-Agent-Key` (agent conversation ingest only). */
  agentKey?: string;
  /** Headers sent with every request (a request's own `headers` add to them). */
  headers?: Record<string, string>;
  /** Replaces globalThis.fetch (a proxy agent, a test double). */
  fetch?: ClientOptions['fetch'];
}

/** The credential headers of the options: the server accepts one credential per request. */
export function credentialHeaders(options: Pick<IntakeClientOptions, 'apiKey' | 'accessToken' | 'agentKey'>): Record<string, string> {
  const headers: Record<string, string> = {};
  if (options.apiKey) headers['X-Service-Api-Key'] = options.apiKey;
  if (options.accessToken) headers.Authorization = `Bearer ${options.accessToken}`;
  if (options.agentKey) headers['X-Service-Agent-Key'] = options.agentKey;
  if (Object.keys(headers).length > 1) throw new TypeError('Give one of apiKey, accessToken and agentKey: the API accepts one credential');
  return headers;
}

/**
 * A typed client: `client.GET('/v3/rest/signals', { params: { query: { limit: 10 } } })` answers
 * `{ data, error, response }` with both typed from the document; `unwrap()` turns it into the data or an
 * IntakeError. Per request, `headers` adds headers (an `Idempotency-Key`, say).
 */
export function createIntakeClient(options: IntakeClientOptions): IntakeClient {
  return createClient<paths, 'application/json'>({
    baseUrl: options.baseUrl, // openapi-fetch drops a trailing /
    headers: { ...options.headers, ...credentialHeaders(options) },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}

/** An answer that is not a 2xx, with the API's stable `errorCode` and human `message`. */
export class IntakeError extends Error {
  override readonly name = 'IntakeError';
  /** The HTTP status. */
  readonly status: number;
  /** The API's stable code (docs/errors.md); `unexpected_response` when the body is not an API error (a proxy's page, say). */
  readonly errorCode: string;
  /** A 400's invalid fields. */
  readonly errors: { path: string; message: string }[] | undefined;
  /** The parsed body: an error may carry details of its own (`id` of a duplicate, `recordingId`, …). */
  readonly body: unknown;
  readonly headers: Headers;

  constructor(response: Response, body: unknown) {
    const error = (typeof body === 'object' && body !== null ? body : {}) as { message?: unknown; errorCode?: unknown; errors?: unknown };
    const message = typeof error.message === 'string' ? error.message : `HTTP ${response.status} ${response.statusText}`.trim();
    super(message);
    this.status = response.status;
    this.errorCode = typeof error.errorCode === 'string' ? error.errorCode : 'unexpected_response';
    this.errors = Array.isArray(error.errors) ? (error.errors as { path: string; message: string }[]) : undefined;
    this.body = body;
    this.headers = response.headers;
  }
}

type Result = { data?: unknown; error?: unknown; response: Response };
/** What a 2xx carries: its body's type, or undefined for a route that answers without one (204). */
export type Unwrapped<R extends Result> = [NonNullable<R['data']>] extends [never] ? undefined : NonNullable<R['data']>;

/** The data of a 2xx answer, or an IntakeError (thrown) for any other. */
export async function unwrap<R extends Result>(result: R | Promise<R>): Promise<Unwrapped<R>> {
  const { data, error, response } = await result;
  if (!response.ok) throw new IntakeError(response, error);
  return data as Unwrapped<R>;
}
