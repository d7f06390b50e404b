import { required } from '../../../src/config.js';
import { isUuid } from '../../../src/db/uuid.js';
import { findUpload } from '../../../src/db/repositories/media-ingestions.js';
import { AppError, NotFoundError } from '../../../src/errors.js';
import type { UploadStore } from '../../../src/media/upload-store.js';
import { UploadUrlSigner } from '../../../src/media/upload-url.js';
import { cancelUpload, createUpload, uploadStatus } from '../../../src/recordings/uploads.js';
import { publicBaseUrl } from '../../base-url.js';
import type { AppContext, AppDeps } from '../../context.js';
import { principalOf, type AuthRequirement } from '../../middleware/auth.js';
import { ERROR_REF } from '../../openapi.js';
import type { RouteRegistry } from '../../routes.js';
import { createdUploadSchema, createUploadBody, uploadStatusSchema } from './schemas.js';
import { TUS_PATH } from './tus.js';

/** The browser origin of a user request (required: it scopes the tus endpoint's CORS), or null. */
function originOf(ctx: AppContext): string | null {
  const origin = ctx.get('origin');
  const user = principalOf(ctx).kind === 'user';
  if (!origin) {
    if (user) throw new AppError('origin_required');
    return null;
  }
  let parsed: URL | null = null;
  try {
    parsed = new URL(origin);
  } catch {
    parsed = null;
  }
  if (!parsed || !['http:', 'https:'].includes(parsed.protocol) || parsed.origin !== origin) {
    throw new AppError('origin_invalid');
  }
  return origin;
}

/** Spec "Direct upload": create, status, cancel. The bytes go to the tus endpoint (`uploadUrl`). */
export function uploadRoutes(deps: AppDeps, registry: RouteRegistry, store: UploadStore): void {
  const signer = new UploadUrlSigner(required(deps.config.auth.signingSecret, 'SIGNING_SECRET'));
  const service = { pool: deps.pool, temporal: deps.temporal, config: deps.config, store };
  const read: AuthRequirement = { accept: ['apiKey', 'user'], scope: 'recordings:read' };
  const write: AuthRequirement = { accept: ['apiKey', 'user'], scope: 'recordings:write' };
  const tags = ['uploads'];
  const ids = (ctx: AppContext, params: Record<string, string>) => {
    const recordingId = params.recordingId ?? '';
    const uploadId = params.uploadId ?? '';
    if (!isUuid(recordingId)) throw new NotFoundError('Recording');
    if (!isUuid(uploadId)) throw new NotFoundError('Upload');
    return { organizationId: principalOf(ctx).organizationId, recordingId: recordingId.toLowerCase(), uploadId: uploadId.toLowerCase() };
  };

  registry.add({
    method: 'post',
    path: '/v3/rest/recordings/{recordingId}/uploads',
    operationId: 'createUpload',
    tags,
    auth: write,
    summary: 'Create a direct upload: a tus resource for the declared size, to transfer with any resumable upload client',
    body: { schema: createUploadBody },
    responses: {
      201: { description: 'The upload destination (an identical retry returns the same waiting attempt)', schema: createdUploadSchema },
      503: { description: 'The ingestion could not be started (Temporal unreachable); nothing was stored, retry', schema: ERROR_REF },
    },
    errors: [
      'origin_required',
      'origin_invalid',
      'recording_not_allowed',
      'batch_user_scoped',
      'media_ingestion_active',
      'asset_already_completed',
      'upload_too_large',
    ],
    handler: async (ctx, { body, params }) => {
      const recordingId = params.recordingId ?? '';
      const origin = originOf(ctx);
      if (!isUuid(recordingId)) throw new NotFoundError('Recording');
      const { row, timeoutSeconds } = await createUpload(service, principalOf(ctx), recordingId.toLowerCase(), body, origin);
      ctx.status = 201;
      ctx.set('Location', `/v3/rest/recordings/${row.recording_id}/uploads/${row.id}`);
      ctx.set('Cache-Control', 'no-store');
      ctx.body = {
        recordingId: row.recording_id,
        uploadId: row.id,
        uploadUrl: `${publicBaseUrl(deps, ctx)}${TUS_PATH}/${signer.segment(row.id)}`,
        timeoutSeconds,
        phase: uploadStatus(row).phase,
      };
    },
  });
  registry.add({
    method: 'get',
    path: '/v3/rest/recordings/{recordingId}/uploads/{uploadId}',
    operationId: 'getUpload',
    tags,
    auth: read,
    summary: 'Get the status of a direct upload',
    responses: {
      200: { description: 'The upload status', schema: uploadStatusSchema },
    },
    handler: async (ctx, { params }) => {
      const row = await findUpload(deps.pool, ids(ctx, params));
      if (!row) throw new NotFoundError('Upload');
      ctx.body = uploadStatus(row);
    },
  });
  registry.add({
    method: 'delete',
    path: '/v3/rest/recordings/{recordingId}/uploads/{uploadId}',
    operationId: 'cancelUpload',
    tags,
    auth: write,
    summary: 'Cancel an upload that has not begun processing (a repeated cancel returns the same body)',
    responses: {
      200: { description: 'The cancelled upload', schema: uploadStatusSchema },
      503: {
        description:
          'The database is unavailable; nothing changed, retry (Temporal is not needed: the workflow sees the cancel when it wakes)',
        schema: ERROR_REF,
      },
    },
    handler: async (ctx, { params }) => {
      ctx.body = await cancelUpload(service, ids(ctx, params), ctx.state.log);
    },
  });
}
