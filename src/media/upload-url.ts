import { createHmac } from 'node:crypto';
import { deriveKey, safeEqual } from '../auth/secrets.js';
import { isUuid } from '../db/uuid.js';

/**
 * The secret part of a direct upload's `uploadUrl` (architecture: a tus resource whose secret is
 * derived, an HMAC of the upload id, so an identical retry returns the same URL without storing
 * it). The URL's last segment is `<uploadId>.<token>`; the token is never logged or stored.
 */
export class UploadUrlSigner {
  private readonly key: Uint8Array;

  constructor(signingSecret: string) {
    this.key = deriveKey(signingSecret, 'upload-url');
  }

  /** The resource segment of the tus URL for this upload. */
  segment(uploadId: string): string {
    return `${uploadId.toLowerCase()}.${this.token(uploadId.toLowerCase())}`;
  }

  /** The upload id a segment names, or null when its token does not match (treated as unknown: 404). */
  uploadIdOf(segment: string): string | null {
    const dot = segment.indexOf('.');
    if (dot < 0) return null;
    const id = segment.slice(0, dot).toLowerCase();
    const token = segment.slice(dot + 1);
    if (!isUuid(id) || !token) return null;
    return safeEqual(Buffer.from(this.token(id)), Buffer.from(token)) ? id : null;
  }

  private token(uploadId: string): string {
    return createHmac('sha256', this.key).update(uploadId).digest('base64url');
  }
}
