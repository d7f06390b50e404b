import { randomUUID } from 'node:crypto';
import { toMonologues } from '../../src/domain/transcript.js';
import { findRecording, listRecordings, recordingChanges } from '../../src/db/repositories/recording-reads.js';
import { recordingExists, utterancesOf } from '../../src/db/repositories/recordings.js';
import { createRecording, validateRecordingBody, type CreateRecordingBody } from '../../src/recordings/create.js';
import { deleteRecording } from '../../src/recordings/deletion.js';
import { startMediaIngestion } from '../../src/recordings/media.js';
import { toUtcInstantOrNull } from '../../src/domain/time.js';
import { required } from '../../src/config.js';
import { NotFoundError } from '../../src/errors.js';
import { PlaybackSigner } from '../../src/media/playback.js';
import { publicBaseUrl } from '../base-url.js';
import type { AppContext, AppDeps } from '../context.js';
import { principalOf } from '../middleware/auth.js';
import { pageWindow } from '../paging.js';
import { changeBody, changeWindow, offsetBody, syncRequest } from '../sync.js';
import type { RouteInput } from '../routes.js';
import {
  presentListItem,
  presentRecording,
  type ListQuery,
  type PlaybackUrl,
  type Transcript,
  type TranscriptEntry,
  type TranscriptQuery,
} from './schemas.js';

const utc = (v: string | undefined) => toUtcInstantOrNull(v) ?? undefined;

export function recordingHandlers(deps: AppDeps) {
  const signer = new PlaybackSigner(required(deps.config.auth.signingSecret, 'SIGNING_SECRET'), deps.config.media.playbackTtlSeconds);
  const playback = (ctx: AppContext): PlaybackUrl => {
    const base = publicBaseUrl(deps, ctx);
    return (recordingId, file) => `${base}${signer.sign(recordingId, file).path}`;
  };
  return {
    create: async (ctx: AppContext, { body }: RouteInput<CreateRecordingBody, unknown>) => {
      const principal = principalOf(ctx);
      const allowedHosts = deps.config.media.fetchAllowedHosts;
      validateRecordingBody(body, allowedHosts);
      const ids = { recordingId: randomUUID(), ingestionId: body.assetUrl === undefined ? null : randomUUID() };
      // URL media: the ingestion workflow starts first and waits for the rows this request commits;
      // Temporal unreachable is a 503 before anything is stored, so a retry starts cleanly.
      // The gateway answers 503 temporal_unavailable (logged by the error middleware with its cause).
      if (ids.ingestionId)
        await startMediaIngestion(deps.temporal, deps.config, {
          organizationId: principal.organizationId,
          recordingId: ids.recordingId,
          ingestionId: ids.ingestionId,
          kind: 'url',
        });
      const id = await createRecording(deps.pool, principal, body, ids, allowedHosts);
      const recording = await findRecording(deps.pool, principal.organizationId, id);
      if (!recording) throw new Error(`recording ${id} vanished after its creation`);
      ctx.status = 201;
      ctx.set('Location', `/v3/rest/recordings/${id}`);
      ctx.body = presentRecording(recording, playback(ctx));
    },

    get: async (ctx: AppContext, { params }: RouteInput<unknown, unknown>) => {
      const recording = params.recordingId ? await findRecording(deps.pool, principalOf(ctx).organizationId, params.recordingId) : null;
      if (!recording) throw new NotFoundError('Recording');
      ctx.body = presentRecording(recording, playback(ctx));
    },

    remove: async (ctx: AppContext, { params }: RouteInput<unknown, unknown>) => {
      await deleteRecording(deps, principalOf(ctx).organizationId, params.recordingId ?? '');
      ctx.status = 204;
    },

    list: async (ctx: AppContext, { query }: RouteInput<unknown, ListQuery>) => {
      const organizationId = principalOf(ctx).organizationId;
      const recordedAt = {
        gt: utc(query.recorded_at_gt),
        gte: utc(query.recorded_at_gte),
        lt: utc(query.recorded_at_lt),
        lte: utc(query.recorded_at_lte),
      };
      const sync = syncRequest(ctx, 'recordings', query);
      if (sync) {
        const page = await recordingChanges(deps.pool, organizationId, recordedAt, changeWindow(sync, query.limit));
        ctx.body = changeBody('recordings', 'recordings', sync, query.limit, page, presentListItem);
        return;
      }
      const rows = await listRecordings(deps.pool, organizationId, { ...recordedAt, ...pageWindow(query) });
      ctx.body = offsetBody('recordings', rows, query, presentListItem);
    },

    transcript: async (ctx: AppContext, { params, query }: RouteInput<unknown, TranscriptQuery>) => {
      const recordingId = params.recordingId ?? '';
      if (!(await recordingExists(deps.pool, principalOf(ctx).organizationId, recordingId))) throw new NotFoundError('Recording');
      const rows = (await utterancesOf(deps.pool, recordingId)).map(
        (u): TranscriptEntry => ({
          recordingId,
          startSec: u.start_sec,
          endSec: u.end_sec,
          speaker: u.speaker,
          text: u.text,
        }),
      );
      const transcript: Transcript =
        query.type === 'monologue'
          ? { type: 'monologue', recordingId, monologues: toMonologues(rows) }
          : { type: 'utterance', recordingId, utterances: rows };
      ctx.body = transcript;
    },
  };
}
