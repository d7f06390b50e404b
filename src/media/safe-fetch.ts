import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { Transform, type Readable } from 'node:stream';
import { Agent, request } from 'undici';
import { publicAddressProblem } from '../domain/asset-url.js';

/**
 * Fetching media from a URL an integrator gave us, without letting the URL reach anything internal
 * (server-side request forgery). The rules of the spec (Create a recording, behaviour 2):
 * - every address a name resolves to is checked, at connect time: the lookup that picks the
 *   address is the one the socket dials, so DNS cannot answer differently between check and use;
 * - redirects are followed by hand, at most MAX_REDIRECTS, each hop checked again;
 * - a plain unauthenticated GET; only the spec's media content types; at most 5 GiB, enforced while
 *   the bytes stream; a successful response without bytes is retryable and never "completed".
 * Failures are `AssetFetchError`s with a stable `code` (recorded as the asset's errorCode) and
 * whether trying again later may help.
 */

/** Decides which IP addresses may be dialled; production uses PUBLIC_ADDRESSES, tests their own. */
export interface AddressPolicy {
  /** Why the address may not be dialled, or null. */
  problem(address: string): string | null;
}

export const PUBLIC_ADDRESSES: AddressPolicy = { problem: publicAddressProblem };

export type Resolver = (hostname: string) => Promise<LookupAddress[]>;
export const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export const MAX_REDIRECTS = 5;
export const MAX_MEDIA_BYTES = 5 * 1024 ** 3;

/** Spec: common AAC, FLAC, MP4, MPEG, Ogg, WAV, WebM and QuickTime audio/video types, and octet-stream. */
export const MEDIA_CONTENT_TYPES = new Set([
  'audio/aac',
  'audio/x-aac',
  'audio/aacp',
  'audio/flac',
  'audio/x-flac',
  'audio/mp4',
  'audio/m4a',
  'audio/x-m4a',
  'video/mp4',
  'audio/mpeg',
  'audio/mp3',
  'audio/x-mpeg',
  'video/mpeg',
  'audio/ogg',
  'video/ogg',
  'application/ogg',
  'audio/opus',
  'audio/wav',
  'audio/x-wav',
  'audio/wave',
  'audio/vnd.wave',
  'audio/webm',
  'video/webm',
  'video/quicktime',
  'application/octet-stream',
]);

export type AssetFetchErrorCode =
  | 'asset_url_blocked'
  | 'asset_url_invalid'
  | 'asset_too_many_redirects'
  | 'asset_unsupported_content_type'
  | 'asset_too_large'
  | 'asset_not_found'
  | 'asset_access_denied'
  | 'asset_http_error'
  | 'asset_unavailable'
  | 'asset_dns_failed'
  | 'asset_network_error'
  | 'asset_empty';

/** Codes worth trying again later (transient DNS and network errors, overloaded servers, no bytes). */
const RETRYABLE = new Set<AssetFetchErrorCode>(['asset_unavailable', 'asset_dns_failed', 'asset_network_error', 'asset_empty']);

export class AssetFetchError extends Error {
  override name = 'AssetFetchError';
  readonly retryable: boolean;
  constructor(
    readonly code: AssetFetchErrorCode,
    message: string,
  ) {
    super(message);
    this.retryable = RETRYABLE.has(code);
  }
}

export interface FetchedMedia {
  body: Readable;
  contentType: string;
  /** Declared by the server; the byte count is enforced regardless. */
  contentLength: number | null;
  /** The URL after redirects. */
  url: string;
}

export interface SafeFetcherOptions {
  policy: AddressPolicy;
  /** Host names (lower case) whose addresses are not checked: an operator's own media hosts (MEDIA_FETCH_ALLOWED_HOSTS). */
  allowedHosts?: readonly string[];
  resolver?: Resolver;
  maxBytes?: number;
  headersTimeoutMs?: number;
  bodyTimeoutMs?: number;
}

export class SafeFetcher {
  private readonly agent: Agent;
  private readonly maxBytes: number;

  constructor(private readonly o: SafeFetcherOptions) {
    this.maxBytes = o.maxBytes ?? MAX_MEDIA_BYTES;
    this.agent = checkedAgent({
      policy: o.policy,
      resolver: o.resolver,
      allowedHosts: o.allowedHosts,
      headersTimeoutMs: o.headersTimeoutMs ?? 30_000,
      bodyTimeoutMs: o.bodyTimeoutMs ?? 60_000,
    });
  }

  /** GETs the media, following redirects by hand; the caller consumes (or destroys) `body`. */
  async open(rawUrl: string, signal?: AbortSignal): Promise<FetchedMedia> {
    let url = this.checkedUrl(rawUrl);
    for (let hop = 0; ; hop++) {
      const res = await request(url, { method: 'GET', dispatcher: this.agent, signal, headers: { accept: '*/*' } }).catch((e: unknown) => {
        throw networkError(e);
      });
      if (res.statusCode >= 300 && res.statusCode < 400 && res.statusCode !== 304) {
        res.body.resume();
        if (hop >= MAX_REDIRECTS) throw new AssetFetchError('asset_too_many_redirects', `more than ${MAX_REDIRECTS} redirects`);
        const location = header(res.headers.location);
        if (!location) throw new AssetFetchError('asset_url_invalid', `HTTP ${res.statusCode} without a Location`);
        url = this.checkedUrl(new URL(location, url).toString());
        continue;
      }
      if (res.statusCode < 200 || res.statusCode >= 300) {
        res.body.resume();
        throw statusError(res.statusCode);
      }
      return this.media(url, res.headers, res.body);
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  private media(url: URL, headers: Record<string, string | string[] | undefined>, body: Readable): FetchedMedia {
    const contentType = (header(headers['content-type']) ?? 'application/octet-stream').split(';')[0]!.trim().toLowerCase();
    if (!MEDIA_CONTENT_TYPES.has(contentType)) {
      discard(body);
      throw new AssetFetchError('asset_unsupported_content_type', `content type ${contentType} is not a supported media type`);
    }
    const declared = header(headers['content-length']);
    const contentLength = declared !== undefined && /^\d+$/.test(declared) ? Number(declared) : null;
    if (contentLength !== null && contentLength > this.maxBytes) {
      discard(body);
      throw new AssetFetchError('asset_too_large', `the media is ${contentLength} bytes; at most ${this.maxBytes}`);
    }
    if (contentLength === 0) {
      discard(body);
      throw new AssetFetchError('asset_empty', 'the server answered without media bytes');
    }
    const out = limit(this.maxBytes);
    // A connection lost mid-body is a network error (retryable); a consumer that gives up frees the socket.
    body.on('error', (e) => out.destroy(networkError(e)));
    out.on('close', () => body.destroy());
    return { body: body.pipe(out), contentType, contentLength, url: url.toString() };
  }

  /** Scheme, credentials and a literal address are checked before any connection (a name at connect). */
  private checkedUrl(raw: string): URL {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new AssetFetchError('asset_url_invalid', 'not an absolute URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new AssetFetchError('asset_url_invalid', `scheme ${url.protocol} is not allowed`);
    if (url.username || url.password) throw new AssetFetchError('asset_url_invalid', 'embedded credentials are not allowed');
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const problem = isIP(host) ? this.o.policy.problem(host) : null;
    if (problem) throw new AssetFetchError('asset_url_blocked', `address ${host} ${problem}`);
    return url;
  }
}

/**
 * An undici dispatcher whose every connection dials only addresses `policy` allows, checked at
 * connect time (the media fetcher's, and the webhook sender's). A refused address fails the request
 * with a cause whose `code` is `EBLOCKED` and whose message says why.
 */
export function checkedAgent(o: {
  policy: AddressPolicy;
  resolver?: Resolver | undefined;
  allowedHosts?: readonly string[] | undefined;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
}): Agent {
  return new Agent({
    connect: { lookup: checkedLookup(o.policy, o.resolver ?? systemResolver, o.allowedHosts ?? []) },
    headersTimeout: o.headersTimeoutMs,
    bodyTimeout: o.bodyTimeoutMs,
  });
}

/**
 * The lookup the socket uses: resolves the name, refuses it when any address is not allowed (a
 * name that also points inside is not trusted), and hands the socket the checked address.
 */
function checkedLookup(policy: AddressPolicy, resolve: Resolver, allowedHosts: readonly string[]): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname)
      .then((addresses) => {
        if (addresses.length === 0) throw Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' });
        const allowed = allowedHosts.includes(hostname.toLowerCase());
        const blocked = allowed ? undefined : addresses.find((a) => policy.problem(a.address) !== null);
        if (blocked)
          throw Object.assign(new Error(`${hostname} resolves to ${blocked.address}, which ${policy.problem(blocked.address)}`), {
            code: 'EBLOCKED',
          });
        const wanted =
          options.family === 6
            ? addresses.filter((a) => a.family === 6)
            : options.family === 4
              ? addresses.filter((a) => a.family === 4)
              : addresses;
        if (options.all) callback(null, wanted);
        else callback(null, wanted[0]!.address, wanted[0]!.family);
      })
      .catch((error: NodeJS.ErrnoException) => callback(error, '', 0));
  };
}

/** Drops a body we will not read (destroying an undici body emits an abort error: expected here). */
function discard(body: Readable): void {
  body.on('error', () => undefined);
  body.destroy();
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function statusError(status: number): AssetFetchError {
  if (status === 404 || status === 410) return new AssetFetchError('asset_not_found', `HTTP ${status}`);
  if (status === 401 || status === 403)
    return new AssetFetchError('asset_access_denied', `HTTP ${status}: the URL must be readable without credentials`);
  if (status === 408 || status === 429 || status >= 500) return new AssetFetchError('asset_unavailable', `HTTP ${status}`);
  return new AssetFetchError('asset_http_error', `HTTP ${status}`);
}

/** DNS and network failures, by their cause (undici wraps the socket's error). */
function networkError(error: unknown): AssetFetchError {
  if (error instanceof AssetFetchError) return error;
  const code = findCode(error);
  if (code === 'EBLOCKED') return new AssetFetchError('asset_url_blocked', messageOf(error));
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ENODATA') return new AssetFetchError('asset_dns_failed', `DNS: ${code}`);
  return new AssetFetchError('asset_network_error', code ? `network: ${code}` : 'network error');
}

export function findCode(error: unknown): string | undefined {
  for (let e = error as { code?: unknown; cause?: unknown } | undefined, i = 0; e && i < 5; e = e.cause as typeof e, i++) {
    if (typeof e.code === 'string' && !e.code.startsWith('UND_ERR_CONNECT') && e.code !== 'UND_ERR_SOCKET') return e.code;
  }
  return (error as { code?: string } | undefined)?.code;
}

export function messageOf(error: unknown): string {
  for (
    let e = error as { message?: string; code?: unknown; cause?: unknown } | undefined, i = 0;
    e && i < 5;
    e = e.cause as typeof e, i++
  ) {
    if (e.code === 'EBLOCKED' && e.message) return e.message;
  }
  return 'the address is not allowed';
}

/** Counts bytes as they stream: past the cap it fails `asset_too_large`; none at all is `asset_empty`. */
function limit(maxBytes: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      seen += chunk.length;
      if (seen > maxBytes) return done(new AssetFetchError('asset_too_large', `the media exceeds ${maxBytes} bytes`));
      done(null, chunk);
    },
    flush(done) {
      done(seen === 0 ? new AssetFetchError('asset_empty', 'the server answered without media bytes') : null);
    },
  });
}
