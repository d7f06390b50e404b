import { Server } from '@tus/server';
import { EVENTS, type Upload } from '@tus/utils';
import type { IncomingMessage } from 'node:http';
import type { Middleware, Next } from 'koa';
import { required } from '../../../src/config.js';
import { AppError, NotFoundError } from '../../../src/errors.js';
import type { UploadStore } from '../../../src/media/upload-store.js';
import { UploadUrlSigner } from '../../../src/media/upload-url.js';
import { admitUploadPatch, findTusUpload, finishUpload, recordUploadProgress } from '../../../src/recordings/uploads.js';
import type { AppContext, AppDeps, AppState } from '../../context.js';

/** Where `uploadUrl`s live: `<TUS_PATH>/<uploadId>.<token>`. */
export const TUS_PATH = '/v3/uploads';
const ALLOWED = 'HEAD, PATCH, OPTIONS';

/**
 * The tus endpoint that receives a direct upload's bytes (HEAD for the offset, PATCH to append;
 * any tus client resumes with the `uploadUrl`). Uploads are created by the REST API only: tus
 * creation (POST) and termination (DELETE) are refused. The URL's signed segment is the credential:
 * a wrong token is an unknown upload (404). CORS answers only the Origins the upload was created
 * (or identically retried) from. The upload services (src/recordings/uploads.ts) read and admit the upload and, at the
 * last byte, tell `media-ingestion/<recordingId>`; if that is lost, the workflow still finds the complete upload at its deadline.
 */
export function tusEndpoint(deps: AppDeps, store: UploadStore): Middleware<AppState> {
  const signer = new UploadUrlSigner(required(deps.config.auth.signingSecret, 'SIGNING_SECRET'));
  /** Each request's upload, as the gate below checked it. */
  const gated = new WeakMap<IncomingMessage, string>();
  const tus = new Server({
    path: TUS_PATH,
    datastore: store.datastore,
    // Declared sizes are checked at creation too; this bounds what the tus server itself accepts.
    maxSize: deps.config.media.uploadMaxBytes,
    // One upload's requests run one at a time across every replica, not only in this process.
    locker: deps.uploadLocks,
    // CORS is decided per upload below; the tus server itself allows no origin.
    allowedOrigins: () => false,
    // The upload the gate below checked, never one @tus/server reads from the URL itself (it takes
    // the last `/` segment of the whole URL, query string included: `?x=/<another upload>`).
    getFileIdFromRequest: (req) => {
      const node = (req as { runtime?: { node?: { req?: IncomingMessage } } }).runtime?.node?.req;
      return node ? gated.get(node) : undefined;
    },
    onUploadFinish: async (_req, upload) => {
      await finishUpload(deps, upload.id, upload.offset, deps.logger);
      return {};
    },
  });
  tus.on(EVENTS.POST_RECEIVE, (_req: unknown, upload: Upload) => {
    recordUploadProgress(deps.pool, upload.id, upload.offset).catch((error: unknown) =>
      deps.logger.warn({ err: error }, 'upload progress not recorded'),
    );
  });

  return async (ctx: AppContext, next: Next): Promise<void> => {
    if (!ctx.path.startsWith(`${TUS_PATH}/`)) {
      await next();
      return;
    }
    const segment = ctx.path.slice(TUS_PATH.length + 1);
    const uploadId = segment.includes('/') ? null : signer.uploadIdOf(segment);
    const row = uploadId ? await findTusUpload(deps.pool, uploadId) : null;
    if (!row) throw new NotFoundError('Upload');
    const origin = ctx.get('origin');
    if (origin && row.cors_origins.includes(origin)) {
      ctx.set('Access-Control-Allow-Origin', origin);
      ctx.set('Vary', 'Origin');
    }
    if (!['HEAD', 'PATCH', 'OPTIONS'].includes(ctx.method)) {
      ctx.set('Allow', ALLOWED);
      throw new AppError('method_not_allowed', {
        message: `${ctx.method} is not allowed on an upload URL: create uploads with POST /v3/rest/recordings/{recordingId}/uploads and cancel them with DELETE there.`,
      });
    }
    if (ctx.method === 'PATCH') await admitUploadPatch(deps, row);
    // Headers set so far (request id, CORS) are on the Node response already; tus adds its own.
    ctx.respond = false;
    gated.set(ctx.req, row.id);
    const from = Number(ctx.get('upload-offset'));
    await tus.handle(ctx.req, ctx.res);
    const to = Number(ctx.res.getHeader('upload-offset'));
    if (ctx.method === 'PATCH' && Number.isFinite(from) && to > from) deps.metrics.uploadBytes.inc(to - from);
  };
}
