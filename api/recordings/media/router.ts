import type { ServerResponse } from 'node:http';
import path from 'node:path';
import send from 'send';
import { required } from '../../../src/config.js';
import { AppError, NotFoundError } from '../../../src/errors.js';
import { isPublishedRendition } from '../../../src/db/repositories/recordings.js';
import { isUuid } from '../../../src/db/uuid.js';
import { createMediaStore } from '../../../src/media/media-store.js';
import { PlaybackSigner, renditionRelativePath } from '../../../src/media/playback.js';
import type { AppContext, AppDeps } from '../../context.js';
import type { RouteRegistry } from '../../routes.js';

const playbackQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { expires: { type: 'string', pattern: '^[0-9]{1,12}$' }, signature: { type: 'string', maxLength: 100 } },
} as const;

/**
 * Playback of a recording's rendition through its signed URL (no other credential: the URL is
 * one), while the file is the recording's published rendition (not after the recording's deletion
 * or a new rendition). From a directory, served with `send`: byte ranges (206, 416), ETag and Last-Modified,
 * HEAD; private caching no longer than the URL lives. From a bucket, a 302 to a presigned GET URL
 * of the object that lives as long as ours: the bucket serves the bytes and their ranges, and no
 * media passes through the API.
 */
export function mediaRoutes(deps: AppDeps, registry: RouteRegistry): void {
  const signer = new PlaybackSigner(required(deps.config.auth.signingSecret, 'SIGNING_SECRET'), deps.config.media.playbackTtlSeconds);
  const store = createMediaStore(deps.config.media);
  registry.add({
    method: 'get',
    path: '/v3/media/playback/{recordingId}/{file}',
    operationId: 'playMedia',
    tags: ['recordings'],
    summary: 'The playback rendition of a recording, by the signed URL in `asset.url` (supports Range requests)',
    security: [],
    query: playbackQuery,
    responses: {
      200: { description: 'The media' },
      206: { description: 'A byte range of the media' },
      302: { description: 'With MEDIA_STORE=s3: the media at a presigned URL of the bucket, valid as long as this one' },
    },
    errors: ['playback_url_invalid', 'playback_url_expired', 'not_found', 'range_not_satisfiable'],
    handler: async (ctx: AppContext, { params, query }) => {
      const recordingId = params.recordingId ?? '';
      const file = params.file ?? '';
      const verdict = signer.verify(recordingId, file, query.expires, query.signature);
      if (verdict === 'invalid') throw new AppError('playback_url_invalid');
      if (verdict === 'expired') throw new AppError('playback_url_expired');
      // Signed, and still this recording's media: a deleted recording's links stop with its 204.
      if (!isUuid(recordingId) || !(await isPublishedRendition(deps.pool, recordingId, file))) throw new NotFoundError('Media');
      const remaining = Math.max(0, Number(query.expires) - Math.floor(Date.now() / 1000));
      const media = await store.playback(renditionRelativePath(recordingId, file), remaining);
      if ('url' in media) {
        ctx.set('Cache-Control', `private, max-age=${remaining}`);
        ctx.redirect(media.url);
        return;
      }
      await serve(ctx, media.file, remaining);
    },
  });
}

/** Hands the response to `send`; its errors (before any byte is written) become the API's errors. */
function serve(ctx: AppContext, file: string, maxAgeSeconds: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const stream = send(ctx.req, `/${path.basename(file)}`, {
      root: path.dirname(file),
      index: false,
      dotfiles: 'deny',
      cacheControl: false,
      acceptRanges: true,
      etag: true,
      lastModified: true,
    });
    stream.on('error', (error: { status?: number }) => {
      if (error.status === 404) return reject(new NotFoundError('Media'));
      if (error.status === 416) return reject(new AppError('range_not_satisfiable'));
      reject(error instanceof Error ? error : new Error('media could not be served'));
    });
    stream.on('headers', (res: ServerResponse) => res.setHeader('Cache-Control', `private, max-age=${maxAgeSeconds}`));
    stream.on('end', resolve);
    ctx.res.on('close', resolve);
    // Koa starts every response as 404; `send` sets 206/304 itself but leaves a full response's status.
    ctx.status = 200;
    ctx.respond = false;
    stream.pipe(ctx.res);
  }).catch((error: unknown) => {
    ctx.respond = true;
    throw error;
  });
}
