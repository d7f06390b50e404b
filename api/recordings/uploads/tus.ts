import { Server } from '@tus/server';
import { EVENTS, type Upload } from '@tus/utils';
import type { IncomingMessage } from 'node:http';
import type { Middleware, Next } from 'koa';
import { required } from '../../../src/config.js';
import { findUploadById, recordUploadBytes } from '../../../src/db/repositories/media-ingestions.js';
import { AppError, NotFoundError } from '../../../src/errors.js';
import type { UploadStore } from '../../../src/media/upload-store.js';
import { UploadUrlSigner } from '../../../src/media/upload-url.js';
import { admitUploadBytes } from '../../../src/recordings/upload-quota.js';
import { mediaIngestionWorkflowId, uploadFinishedSignal } from '../../../workflows/media-ingestion/contract.js';
import type { AppContext, AppDeps, AppState } from '../../context.js';

/** Where `uploadUrl`s live: `<TUS_PATH>/<uploadId>.<token>`. */
export const TUS_PATH = '/v3/uploads';
const ALLOWED = 'HEAD, PATCH, OPTIONS';
const SIGNAL_DEADLINE_MS = 5_000;

/**
 * The tus endpoint that receives a direct upload's bytes (HEAD for the offset, PATCH to append;
 * any tus client resumes with the `uploadUrl`). Uploads are created by the REST API only: tus
 * creation (POST) and termination (DELETE) are refused. The URL's signed segment is the credential:
 * a wrong token is an unknown upload (404). CORS answers only the Origins the upload was created
 * (or identically retried) from. The last byte signals `media-ingestion/<recordingId>`; if that signal is lost, the
 * workflow still finds the complete upload at its deadline.
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
      await finished(upload);
      return {};
    },
  });
  tus.on(EVENTS.POST_RECEIVE, (_req: unknown, upload: Upload) => {
    recordUploadBytes(deps.pool, upload.id, upload.offset).catch((error: unknown) =>
      deps.logger.warn({ err: error }, 'upload progress not recorded'),
    );
  });

  async function finished(upload: Upload): Promise<void> {
    const row = await findUploadById(deps.pool, upload.id);
    if (!row) return;
    await recordUploadBytes(deps.pool, upload.id, upload.offset);
    try {
      const handle = deps.temporal.client.workflow.getHandle(mediaIngestionWorkflowId(row.recording_id));
      await deps.temporal.connection.withDeadline(Date.now() + SIGNAL_DEADLINE_MS, () => handle.signal(uploadFinishedSignal));
    } catch (error) {
      deps.logger.warn({ err: error, uploadId: upload.id }, 'upload finished but its workflow was not told; it finds out at its deadline');
    }
  }

  return async (ctx: AppContext, next: Next): Promise<void> => {
    if (!ctx.path.startsWith(`${TUS_PATH}/`)) {
      await next();
      return;
    }
    const segment = ctx.path.slice(TUS_PATH.length + 1);
    const uploadId = segment.includes('/') ? null : signer.uploadIdOf(segment);
    const row = uploadId ? await findUploadById(deps.pool, uploadId) : null;
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
    if (ctx.method === 'PATCH') {
      if (row.phase === 'cancelled' || row.phase === 'failed' || (row.phase === 'waiting' && row.expired)) {
        throw new AppError('upload_closed', {
          message: `The upload is ${row.phase === 'waiting' ? 'expired' : row.phase}; create a new upload.`,
        });
      }
      if (row.phase !== 'waiting') throw new AppError('upload_complete');
      await admitUploadBytes(deps.pool, row, deps.config.media.uploadQuotaBytes);
    }
    // Headers set so far (request id, CORS) are on the Node response already; tus adds its own.
    ctx.respond = false;
    gated.set(ctx.req, row.id);
    const from = Number(ctx.get('upload-offset'));
    await tus.handle(ctx.req, ctx.res);
    const to = Number(ctx.res.getHeader('upload-offset'));
    if (ctx.method === 'PATCH' && Number.isFinite(from) && to > from) deps.metrics.uploadBytes.inc(to - from);
  };
}
