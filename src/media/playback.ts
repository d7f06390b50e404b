import { createHmac } from 'node:crypto';
import path from 'node:path';
import { deriveKey, safeEqual } from '../auth/secrets.js';
import { isUuid } from '../db/uuid.js';

/**
 * Signed, expiring playback URLs (architecture: `asset.url` is derived at request time). The
 * signature is an HMAC, under a key derived from SIGNING_SECRET for this purpose only, of the
 * recording, the file and the expiry; the URL itself is the credential, so it carries nothing else.
 * Expiries are rounded up to a 5-minute step: reads of the same recording within a step get the
 * same URL, which players and caches can reuse.
 */
const STEP_SECONDS = 300;
/** Renditions are named by the service: a UUID and the rendition's extension. */
const FILE = /^[0-9a-f-]{36}\.(m4a|mp3|mp4)$/;

export class PlaybackSigner {
  private readonly key: Uint8Array;

  constructor(
    signingSecret: string,
    private readonly ttlSeconds: number,
  ) {
    this.key = deriveKey(signingSecret, 'playback-url');
  }

  /** The path and query of a playback URL valid for at least the TTL from `now`. */
  sign(recordingId: string, file: string, now = Date.now()): { path: string; expiresAt: string } {
    const expires = Math.ceil((now / 1000 + this.ttlSeconds) / STEP_SECONDS) * STEP_SECONDS;
    const signature = this.signature(recordingId, file, expires);
    return {
      path: `/v3/media/playback/${recordingId}/${file}?expires=${expires}&signature=${signature}`,
      expiresAt: new Date(expires * 1000).toISOString(),
    };
  }

  /** 'ok', or why the URL cannot be served. */
  verify(
    recordingId: string,
    file: string,
    expires: string | undefined,
    signature: string | undefined,
    now = Date.now(),
  ): 'ok' | 'invalid' | 'expired' {
    if (!isUuid(recordingId) || !FILE.test(file) || !expires || !/^\d{1,12}$/.test(expires) || !signature) return 'invalid';
    const expected = Buffer.from(this.signature(recordingId, file, Number(expires)));
    if (!safeEqual(expected, Buffer.from(signature))) return 'invalid';
    return Number(expires) * 1000 < now ? 'expired' : 'ok';
  }

  private signature(recordingId: string, file: string, expires: number): string {
    return createHmac('sha256', this.key).update(`${recordingId}/${file}:${expires}`).digest('base64url');
  }
}

/** Where a recording's rendition lives under the media directory (names are validated first). */
export function renditionRelativePath(recordingId: string, file: string): string {
  if (!isUuid(recordingId) || !FILE.test(file)) throw new Error('invalid rendition name');
  return path.posix.join('renditions', recordingId.toLowerCase(), file);
}
