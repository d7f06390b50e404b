import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { sql, type DatabasePool } from 'slonik';
import * as tus from 'tus-js-client';
import { z } from 'zod';
import { createDatabasePool } from '../../../src/db/pool.js';
import { createBatch } from '../../../src/db/repositories/media-ingestions.js';
import { createFolder } from '../../../src/recordings/catalog.js';
import { FileUploadStore, uploadsDirectory } from '../../../src/media/upload-store.js';
import { RECORDING_ID, STATUS } from '../../../src/temporal/search-attributes.js';
import { mediaIngestionWorkflowId } from '../../../src/temporal/ids.js';
import type { MediaIngestionResult } from '../../../workflows/media-ingestion/contract.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { testConfig } from '../../../harness/config.js';
import { createTestKey, createTestOrg, createTestUser, type TestOrg } from '../../../harness/fixtures.js';
import { createTestDatabase } from '../../../harness/stack.js';
import { eventually, waitFor } from '../../../harness/wait.js';
import { startTestWorker, type TestWorker } from '../../../harness/worker.js';
import { writeTone } from '../../../harness/media.js';
import { testActivityMetrics } from '../../helpers/metrics.js';

const ORIGIN = 'https://app.example.com';

/**
 * Direct uploads end to end on the real stack: the REST API (create, status, cancel), the tus
 * endpoint driven by tus-js-client and by raw HTTP, the media ingestion workflow and the recording's asset.
 */
describe('direct uploads (tus)', function () {
  this.timeout(120_000);
  let mediaDir: string;
  let pool: DatabasePool;
  let worker: TestWorker;
  let api: TestApi;
  let org: TestOrg;
  let other: TestOrg;
  let tone: Buffer;
  const counted = testActivityMetrics();

  before(async () => {
    mediaDir = await mkdtemp(path.join(os.tmpdir(), 'intake-uploads-'));
    const wav = path.join(mediaDir, 'tone.wav');
    await writeTone(wav, { seconds: 5 });
    tone = await readFile(wav);
    pool = await createDatabasePool(await createTestDatabase());
    worker = await startTestWorker(pool, { deps: { mediaDir, metrics: counted.metrics } });
    api = await startTestApi({ pool, config: testConfig({ STORAGE_DIR: mediaDir, TEMPORAL_TASK_QUEUE: worker.taskQueue }) });
    org = await createTestOrg(pool);
    other = await createTestOrg(pool);
  });
  after(async () => {
    await api?.close();
    await worker?.stop();
    await pool?.end();
    await rm(mediaDir, { recursive: true, force: true });
  });

  const keyHeaders = (o: TestOrg = org) => ({ 'X-Service-Api-Key': o.apiKey });
  async function newRecording(o: TestOrg = org): Promise<string> {
    const res = await api.request('/v3/rest/recordings', {
      method: 'POST',
      headers: keyHeaders(o),
      json: { record: { externalId: randomUUID() } },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.id as string;
  }
  const createUpload = (recordingId: string, json: unknown, headers: Record<string, string> = keyHeaders()) =>
    api.request(`/v3/rest/recordings/${recordingId}/uploads`, { method: 'POST', headers, json });
  const status = (recordingId: string, uploadId: string, headers: Record<string, string> = keyHeaders()) =>
    api.request(`/v3/rest/recordings/${recordingId}/uploads/${uploadId}`, { headers });
  const cancel = (recordingId: string, uploadId: string, headers: Record<string, string> = keyHeaders()) =>
    api.request(`/v3/rest/recordings/${recordingId}/uploads/${uploadId}`, { method: 'DELETE', headers });
  const recording = async (id: string) => (await api.request(`/v3/rest/recordings/${id}`, { headers: keyHeaders() })).body;
  const ingestions = (recordingId: string) =>
    pool.oneFirst(sql.type(z.object({ n: z.number() }))`
    SELECT count(*)::int AS n FROM media_ingestions WHERE recording_id = ${recordingId}`);
  const result = (recordingId: string) =>
    api.temporal.client.workflow.getHandle(mediaIngestionWorkflowId(recordingId)).result() as Promise<MediaIngestionResult>;

  /** Sends the whole file with tus-js-client, resuming the service-created resource by its URL. */
  function tusUpload(uploadUrl: string, data: Buffer, options: Partial<tus.UploadOptions> = {}): Promise<void> {
    return new Promise((resolve, reject) => {
      const upload = new tus.Upload(data, {
        uploadUrl,
        retryDelays: [0, 200, 500],
        ...options,
        onSuccess: () => resolve(),
        onError: reject,
      });
      upload.start();
    });
  }
  const tusHeaders = { 'Tus-Resumable': '1.0.0' };
  const patch = (uploadUrl: string, offset: number, chunk: Buffer, headers: Record<string, string> = {}) =>
    fetch(uploadUrl, {
      method: 'PATCH',
      body: chunk,
      headers: { ...tusHeaders, 'Upload-Offset': String(offset), 'Content-Type': 'application/offset+octet-stream', ...headers },
    });

  describe('create', () => {
    it('201 with a tus uploadUrl for the declared size; the status and the asset wait for bytes', async () => {
      const recordingId = await newRecording();
      const res = await createUpload(recordingId, { fileName: 'call.wav', fileSize: tone.length });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      assert.deepEqual(Object.keys(res.body).sort(), ['phase', 'recordingId', 'timeoutSeconds', 'uploadId', 'uploadUrl']);
      assert.equal(res.body.recordingId, recordingId);
      assert.equal(res.body.phase, 'waiting');
      assert.equal(res.body.timeoutSeconds, 3600);
      assert.match(res.body.uploadUrl, new RegExp(`^${api.url}/v3/uploads/${res.body.uploadId}\\.[A-Za-z0-9_-]{43}$`));
      const head = await fetch(res.body.uploadUrl, { method: 'HEAD', headers: tusHeaders });
      assert.deepEqual(
        [head.status, head.headers.get('upload-offset'), head.headers.get('upload-length')],
        [200, '0', String(tone.length)],
      );
      assert.deepEqual((await status(recordingId, res.body.uploadId)).body, {
        recordingId,
        uploadId: res.body.uploadId,
        phase: 'waiting',
        encodeProgress: null,
        errorCode: null,
      });
      assert.deepEqual((await recording(recordingId)).asset, { status: 'waiting', url: null, errorCode: null });
      const described = await api.temporal.client.workflow.getHandle(mediaIngestionWorkflowId(recordingId)).describe();
      assert.deepEqual(
        [described.typedSearchAttributes.get(RECORDING_ID), described.typedSearchAttributes.get(STATUS)],
        [recordingId, 'waiting'],
      );
      assert.equal(api.logs.join('').includes(res.body.uploadUrl.split('.').pop() as string), false, 'the URL token is never logged');
    });

    it('an identical retry (recording, fileName, fileSize, source, folderId, batchId) returns the same waiting attempt, whatever credential sends it', async () => {
      const recordingId = await newRecording();
      const folderId = (await createFolder(pool, org.organizationId, 'retries')).id;
      const body = { fileName: 'call.wav', fileSize: 1000, inMobileApp: false, folderId };
      const first = await createUpload(recordingId, body);
      assert.equal(first.status, 201, JSON.stringify(first.body));
      const again = await createUpload(recordingId, { fileName: 'call.wav', fileSize: 1000, folderId: folderId.toUpperCase() });
      assert.deepEqual([again.status, again.body.uploadId, again.body.uploadUrl], [201, first.body.uploadId, first.body.uploadUrl]);
      assert.ok(again.body.timeoutSeconds <= 3600 && again.body.timeoutSeconds > 3590);
      // Another credential of the same organization: an API key, and a user's token (from a browser Origin).
      const key = await createTestKey(pool, org.organizationId, ['recordings:write']);
      const otherKey = await createUpload(recordingId, body, { 'X-Service-Api-Key': key.apiKey });
      assert.deepEqual(
        [otherKey.status, otherKey.body.uploadId, otherKey.body.uploadUrl],
        [201, first.body.uploadId, first.body.uploadUrl],
      );
      const user = await createTestUser(pool, org.organizationId);
      const asUser = await createUpload(recordingId, body, { Authorization: `Bearer ${user.accessToken}`, Origin: ORIGIN });
      assert.deepEqual([asUser.status, asUser.body.uploadId, asUser.body.uploadUrl], [201, first.body.uploadId, first.body.uploadUrl]);
      // That browser may send the bytes: the upload URL answers CORS for the retry's Origin.
      const head = await fetch(first.body.uploadUrl, { method: 'HEAD', headers: { ...tusHeaders, Origin: ORIGIN } });
      assert.equal(head.headers.get('access-control-allow-origin'), ORIGIN);
      // Any other field of the identity makes another request: 409 while the first is active.
      for (const different of [
        { ...body, fileSize: 1001 },
        { ...body, fileName: 'other.wav' },
        { ...body, inMobileApp: true },
        { fileName: 'call.wav', fileSize: 1000 },
        { ...body, folderId: (await createFolder(pool, org.organizationId, 'elsewhere')).id },
      ]) {
        const res = await createUpload(recordingId, different);
        assert.deepEqual(
          [res.status, res.body.errorCode, res.body.uploadId],
          [409, 'media_ingestion_active', first.body.uploadId],
          JSON.stringify(different),
        );
        assert.equal(typeof res.body.message, 'string');
      }
      assert.equal(await ingestions(recordingId), 1);
    });

    it('folderId files the recording in that folder, as folderIds does on create', async () => {
      const recordingId = await newRecording();
      const folderId = (await createFolder(pool, org.organizationId, 'uploads here')).id;
      const res = await createUpload(recordingId, { fileName: 'call.wav', fileSize: 1000, folderId });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      assert.deepEqual((await recording(recordingId)).folderIds, [folderId]);
      // A recording already in folders keeps them and gains this one.
      const filed = (await createFolder(pool, org.organizationId, 'filed at create')).id;
      const created = await api.request('/v3/rest/recordings', {
        method: 'POST',
        headers: keyHeaders(),
        json: { record: { externalId: randomUUID() }, folderIds: [filed] },
      });
      const second = await createUpload(created.body.id as string, { fileName: 'call.wav', fileSize: 1000, folderId });
      assert.equal(second.status, 201, JSON.stringify(second.body));
      assert.deepEqual(new Set((await recording(created.body.id as string)).folderIds), new Set([filed, folderId]));
    });

    it("409 while the recording's URL media is still being ingested (one active ingestion, upload or URL)", async () => {
      // The host does not resolve here: the transfer is retried and the asset stays queued.
      const created = await api.request('/v3/rest/recordings', {
        method: 'POST',
        headers: keyHeaders(),
        json: { record: { externalId: randomUUID() }, assetUrl: 'https://media.invalid/call.mp3' },
      });
      assert.equal(created.status, 201);
      const res = await createUpload(created.body.id as string, { fileName: 'call.wav', fileSize: 1000 });
      assert.deepEqual([res.status, res.body.errorCode], [409, 'media_ingestion_active']);
      assert.equal(res.body.uploadId, undefined);
      assert.equal(await ingestions(created.body.id as string), 1);
      await api.temporal.client.workflow.getHandle(mediaIngestionWorkflowId(created.body.id as string)).terminate('test over');
    });

    it('400 for an invalid body, storing nothing', async () => {
      const recordingId = await newRecording();
      const cases: [unknown, string][] = [
        [{ fileSize: 10 }, 'body.fileName'],
        [{ fileName: '   ', fileSize: 10 }, 'body.fileName'],
        [{ fileName: 'a.wav' }, 'body.fileSize'],
        [{ fileName: 'a.wav', fileSize: 0 }, 'body.fileSize'],
        [{ fileName: 'a.wav', fileSize: 9_007_199_254_740_992 }, 'body.fileSize'],
        [{ fileName: 'a.wav', fileSize: 1.5 }, 'body.fileSize'],
        [{ fileName: 'a.wav', fileSize: '10' }, 'body.fileSize'],
        [{ fileName: 'a.wav', fileSize: 10, folderId: '123' }, 'body.folderId'],
        [{ fileName: 'a.wav', fileSize: 10, batchId: 'batch-1' }, 'body.batchId'],
        [{ fileName: 'a.wav', fileSize: 10, inMobileApp: 'yes' }, 'body.inMobileApp'],
        [{ fileName: 'a.wav', fileSize: 10, source: 'x' }, 'body'],
      ];
      for (const [body, where] of cases) {
        const res = await createUpload(recordingId, body);
        assert.equal(res.status, 400, JSON.stringify(body));
        assert.equal(res.body.errorCode, 'validation_failed');
        assert.ok(
          res.body.errors.some((e: { path: string }) => e.path.startsWith(where)),
          `${JSON.stringify(body)}: ${JSON.stringify(res.body.errors)}`,
        );
      }
      // The largest size the spec allows is accepted.
      const largest = await createUpload(recordingId, { fileName: 'huge.mp4', fileSize: 9_007_199_254_740_991 });
      assert.equal(largest.status, 201, JSON.stringify(largest.body));
      assert.equal((await cancel(recordingId, largest.body.uploadId)).status, 200);
      assert.equal(await ingestions(recordingId), 1);
    });

    it('a user request needs an Origin (400 otherwise) and that Origin scopes CORS on the upload URL', async () => {
      const recordingId = await newRecording();
      const user = await createTestUser(pool, org.organizationId);
      const bearer = { Authorization: `Bearer ${user.accessToken}` };
      const missing = await createUpload(recordingId, { fileName: 'a.wav', fileSize: 10 }, bearer);
      assert.deepEqual([missing.status, missing.body.errorCode], [400, 'origin_required']);
      const invalid = await createUpload(
        recordingId,
        { fileName: 'a.wav', fileSize: 10 },
        { ...bearer, Origin: 'https://app.example.com/path' },
      );
      assert.deepEqual([invalid.status, invalid.body.errorCode], [400, 'origin_invalid']);
      assert.equal(await ingestions(recordingId), 0);
      const res = await createUpload(recordingId, { fileName: 'a.wav', fileSize: 10 }, { ...bearer, Origin: ORIGIN });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      const preflight = await fetch(res.body.uploadUrl, {
        method: 'OPTIONS',
        headers: {
          Origin: ORIGIN,
          'Access-Control-Request-Method': 'PATCH',
          'Access-Control-Request-Headers': 'tus-resumable,upload-offset,content-type',
        },
      });
      assert.equal(preflight.status, 204);
      assert.equal(preflight.headers.get('access-control-allow-origin'), ORIGIN);
      assert.match(preflight.headers.get('access-control-allow-methods') ?? '', /PATCH/);
      const head = await fetch(res.body.uploadUrl, { method: 'HEAD', headers: { ...tusHeaders, Origin: ORIGIN } });
      assert.equal(head.headers.get('access-control-allow-origin'), ORIGIN);
      assert.match(head.headers.get('access-control-expose-headers') ?? '', /Upload-Offset/);
      const foreign = await fetch(res.body.uploadUrl, { method: 'HEAD', headers: { ...tusHeaders, Origin: 'https://evil.example' } });
      assert.equal(foreign.headers.get('access-control-allow-origin'), null);
      // An API key needs no Origin.
      const keyed = await createUpload(await newRecording(), { fileName: 'a.wav', fileSize: 10 });
      assert.equal(keyed.status, 201);
    });

    it('401 without credentials or when the organization may not record; 403 without the write scope', async () => {
      const recordingId = await newRecording();
      const none = await createUpload(recordingId, { fileName: 'a.wav', fileSize: 10 }, {});
      assert.deepEqual([none.status, none.body.errorCode], [401, 'unauthenticated']);
      const bad = await createUpload(recordingId, { fileName: 'a.wav', fileSize: 10 }, { 'X-Service-Api-Key': 'ik_nope' });
      assert.deepEqual([bad.status, bad.body.errorCode], [401, 'invalid_credentials']);
      const readOnly = await createTestKey(pool, org.organizationId, ['recordings:read']);
      const forbidden = await createUpload(recordingId, { fileName: 'a.wav', fileSize: 10 }, { 'X-Service-Api-Key': readOnly.apiKey });
      assert.deepEqual([forbidden.status, forbidden.body.errorCode], [403, 'insufficient_scope']);
      const noRecording = await createTestOrg(pool, { recordingAllowed: false });
      const theirs = await pool.oneFirst(sql.type(z.object({ id: z.string() }))`
        INSERT INTO recordings (organization_id, name) VALUES (${noRecording.organizationId}, 'r') RETURNING id`);
      const notAllowed = await createUpload(theirs, { fileName: 'a.wav', fileSize: 10 }, keyHeaders(noRecording));
      assert.deepEqual([notAllowed.status, notAllowed.body.errorCode], [401, 'recording_not_allowed']);
      const user = await createTestUser(pool, noRecording.organizationId);
      const asUser = await createUpload(
        theirs,
        { fileName: 'a.wav', fileSize: 10 },
        { Authorization: `Bearer ${user.accessToken}`, Origin: ORIGIN },
      );
      assert.deepEqual([asUser.status, asUser.body.errorCode], [401, 'recording_not_allowed']);
      assert.equal((await ingestions(recordingId)) + (await ingestions(theirs)), 0);
    });

    it('404 for an unknown or foreign recording, folder or batch; 403 for a batch with an API key (batches are user-scoped)', async () => {
      const recordingId = await newRecording();
      const body = { fileName: 'a.wav', fileSize: 10 };
      const unknown = await createUpload(randomUUID(), body);
      assert.deepEqual([unknown.status, unknown.body.errorCode], [404, 'not_found']);
      const notUuid = await createUpload('123', body);
      assert.equal(notUuid.status, 404);
      const foreign = await createUpload(await newRecording(other), body);
      assert.deepEqual([foreign.status, foreign.body.errorCode], [404, 'not_found']);
      const foreignFolder = (await createFolder(pool, other.organizationId, 'theirs')).id;
      const folder = await createUpload(recordingId, { ...body, folderId: foreignFolder });
      assert.deepEqual([folder.status, folder.body.errorCode, folder.body.message], [404, 'not_found', 'Folder not found.']);
      const user = await createTestUser(pool, org.organizationId);
      const colleague = await createTestUser(pool, org.organizationId);
      const theirBatch = await createBatch(pool, org.organizationId, colleague.userId);
      const asUser = { Authorization: `Bearer ${user.accessToken}`, Origin: ORIGIN };
      const batch = await createUpload(recordingId, { ...body, batchId: theirBatch }, asUser);
      assert.deepEqual([batch.status, batch.body.errorCode, batch.body.message], [404, 'not_found', 'Batch not found.']);
      const unknownBatch = await createUpload(recordingId, { ...body, batchId: randomUUID() }, asUser);
      assert.equal(unknownBatch.status, 404);
      const keyBatch = await createUpload(recordingId, { ...body, batchId: theirBatch });
      assert.deepEqual([keyBatch.status, keyBatch.body.errorCode], [403, 'batch_user_scoped']);
      assert.match(keyBatch.body.message, /user-scoped/);
      assert.equal(await ingestions(recordingId), 0);
      // The user's own batch and a visible folder are accepted.
      const ownBatch = await createBatch(pool, org.organizationId, user.userId);
      const ownFolder = (await createFolder(pool, org.organizationId, 'ours')).id;
      const ok = await createUpload(recordingId, { ...body, batchId: ownBatch, folderId: ownFolder }, asUser);
      assert.equal(ok.status, 201, JSON.stringify(ok.body));
    });
  });

  describe('status and cancel', () => {
    it('404 for an unknown upload, one of another recording, or another organization', async () => {
      const recordingId = await newRecording();
      const created = await createUpload(recordingId, { fileName: 'a.wav', fileSize: 10 });
      const otherRecording = await newRecording();
      for (const [rec, up, headers] of [
        [recordingId, randomUUID(), keyHeaders()],
        [otherRecording, created.body.uploadId, keyHeaders()],
        [recordingId, created.body.uploadId, keyHeaders(other)],
        [recordingId, 'nope', keyHeaders()],
      ] as [string, string, Record<string, string>][]) {
        const got = await status(rec, up, headers);
        assert.deepEqual([got.status, got.body.errorCode], [404, 'not_found']);
        const cancelled = await cancel(rec, up, headers);
        assert.deepEqual([cancelled.status, cancelled.body.errorCode], [404, 'not_found']);
      }
      assert.equal((await status(recordingId, created.body.uploadId)).body.phase, 'waiting');
    });

    it('waiting to cancelled (the claim released, a new upload possible); a repeat returns the same body', async () => {
      const recordingId = await newRecording();
      const created = await createUpload(recordingId, { fileName: 'a.wav', fileSize: tone.length });
      const cancelled = await cancel(recordingId, created.body.uploadId);
      const expected = { recordingId, uploadId: created.body.uploadId, phase: 'cancelled', encodeProgress: null, errorCode: null };
      assert.deepEqual([cancelled.status, cancelled.body], [200, expected]);
      assert.deepEqual(await result(recordingId), { phase: 'cancelled', errorCode: null });
      const again = await cancel(recordingId, created.body.uploadId);
      assert.deepEqual([again.status, again.body], [200, expected]);
      assert.deepEqual((await status(recordingId, created.body.uploadId)).body, expected);
      assert.equal((await recording(recordingId)).asset.status, 'cancelled');
      // The tus resource is gone: bytes are refused, and its files were deleted.
      const refused = await patch(created.body.uploadUrl, 0, tone.subarray(0, 10));
      assert.deepEqual([refused.status, ((await refused.json()) as { errorCode: string }).errorCode], [410, 'upload_closed']);
      assert.equal(existsSync(path.join(mediaDir, 'uploads', created.body.uploadId)), false);
      // A new upload may be created, with a new destination.
      const next = await createUpload(recordingId, { fileName: 'a.wav', fileSize: tone.length });
      assert.equal(next.status, 201);
      assert.notEqual(next.body.uploadId, created.body.uploadId);
      assert.equal((await recording(recordingId)).asset.status, 'waiting');
    });

    it('the claim is released when the cancel is answered: an immediate new upload is 201, again and again', async () => {
      const recordingId = await newRecording();
      const seen = new Set<string>();
      let previous = await createUpload(recordingId, { fileName: 'a.wav', fileSize: tone.length });
      assert.equal(previous.status, 201, JSON.stringify(previous.body));
      for (let round = 0; round < 5; round++) {
        seen.add(previous.body.uploadId);
        const cancelled = await cancel(recordingId, previous.body.uploadId);
        assert.deepEqual([cancelled.status, cancelled.body.phase], [200, 'cancelled']);
        const next = await createUpload(recordingId, { fileName: 'a.wav', fileSize: tone.length });
        assert.equal(next.status, 201, `round ${round}: ${JSON.stringify(next.body)}`);
        assert.equal(seen.has(next.body.uploadId), false);
        assert.equal(next.body.phase, 'waiting');
        previous = next;
      }
      // The last one is a working upload: its bytes go through to ready; the superseded ones left no bytes behind.
      await tusUpload(previous.body.uploadUrl, tone);
      assert.deepEqual(await result(recordingId), { phase: 'ready', errorCode: null });
      assert.equal((await recording(recordingId)).asset.status, 'completed');
      for (const id of seen) assert.equal(existsSync(path.join(mediaDir, 'uploads', id)), false, `bytes of ${id} left behind`);
    });
  });

  describe('transfer and processing', () => {
    it('tus-js-client sends the file: encoding, finalizing, ready; the asset is completed and playable', async () => {
      const recordingId = await newRecording();
      const created = await createUpload(recordingId, { fileName: 'tone.wav', fileSize: tone.length });
      const encodes = await counted.value('intake_media_phase_duration_seconds_count', { phase: 'encode', outcome: 'completed' });
      const ready = await counted.value('intake_media_ingestions_ended_total', { result: 'ready', error_code: '' });
      const phases = new Set<string>();
      const poll = setInterval(() => {
        status(recordingId, created.body.uploadId).then(
          (s) => phases.add(s.body.phase as string),
          () => undefined,
        );
      }, 50);
      await tusUpload(created.body.uploadUrl, tone, { chunkSize: 64 * 1024 });
      assert.deepEqual(await result(recordingId), { phase: 'ready', errorCode: null });
      clearInterval(poll);
      const final = (await status(recordingId, created.body.uploadId)).body;
      assert.deepEqual(final, { recordingId, uploadId: created.body.uploadId, phase: 'ready', encodeProgress: null, errorCode: null });
      assert.ok(phases.has('waiting'), [...phases].join());
      // The worker's counters: one encode and one finalize timed, one ingestion ended ready.
      assert.equal(
        await counted.value('intake_media_phase_duration_seconds_count', { phase: 'encode', outcome: 'completed' }),
        encodes + 1,
      );
      assert.ok((await counted.value('intake_media_phase_duration_seconds_sum', { phase: 'encode', outcome: 'completed' })) > 0);
      assert.ok((await counted.value('intake_media_phase_duration_seconds_count', { phase: 'finalize', outcome: 'completed' })) >= 1);
      assert.equal(await counted.value('intake_media_ingestions_ended_total', { result: 'ready', error_code: '' }), ready + 1);
      const body = await recording(recordingId);
      assert.equal(body.asset.status, 'completed');
      const media = await fetch(body.asset.url as string, { headers: { range: 'bytes=0-9' } });
      assert.deepEqual([media.status, media.headers.get('content-type')], [206, 'audio/mp4']);
      // The upload's bytes are deleted once the rendition is published.
      assert.equal(existsSync(path.join(mediaDir, 'uploads', created.body.uploadId)), false);
      // Processing has begun: cancel is 409 and changes nothing.
      const late = await cancel(recordingId, created.body.uploadId);
      assert.deepEqual([late.status, late.body.errorCode, late.body.phase], [409, 'upload_processing_begun', 'ready']);
      // The recording has its media now: another upload is refused.
      const more = await createUpload(recordingId, { fileName: 'tone.wav', fileSize: tone.length });
      assert.deepEqual([more.status, more.body.errorCode], [409, 'asset_already_completed']);
    });

    it('raw tus over HTTP: HEAD for the offset, PATCH in parts, a wrong offset is 409; the asset is uploading meanwhile', async () => {
      const recordingId = await newRecording();
      const created = await createUpload(recordingId, { fileName: 'tone.wav', fileSize: tone.length });
      const url = created.body.uploadUrl as string;
      const half = Math.floor(tone.length / 2);
      const first = await patch(url, 0, tone.subarray(0, half));
      assert.deepEqual([first.status, first.headers.get('upload-offset')], [204, String(half)]);
      const head = await fetch(url, { method: 'HEAD', headers: tusHeaders });
      assert.equal(head.headers.get('upload-offset'), String(half));
      assert.equal((await recording(recordingId)).asset.status, 'uploading');
      assert.equal((await status(recordingId, created.body.uploadId)).body.phase, 'waiting');
      const wrong = await patch(url, 0, tone.subarray(0, 10));
      assert.equal(wrong.status, 409);
      const tooMuch = await patch(url, half, Buffer.concat([tone.subarray(half), Buffer.alloc(10)]));
      assert.equal(tooMuch.status, 413);
      const rest = await patch(url, half, tone.subarray(half));
      assert.deepEqual([rest.status, rest.headers.get('upload-offset')], [204, String(tone.length)]);
      assert.deepEqual(await result(recordingId), { phase: 'ready', errorCode: null });
      const after = await patch(url, tone.length, Buffer.alloc(0));
      assert.deepEqual([after.status, ((await after.json()) as { errorCode: string }).errorCode], [409, 'upload_complete']);
      // The URL's token never reaches the logs, whatever went through the tus endpoint.
      const token = url.split('.').pop() as string;
      assert.ok(api.logs.length > 0);
      assert.equal(
        api.logs.some((line) => line.includes(token)),
        false,
      );
    });

    it('the tus endpoint refuses creation, termination, GET, a wrong token and a missing Tus-Resumable', async () => {
      const recordingId = await newRecording();
      const created = await createUpload(recordingId, { fileName: 'a.wav', fileSize: 10 });
      const url = created.body.uploadUrl as string;
      const post = await fetch(`${api.url}/v3/uploads/${created.body.uploadId}.x`, {
        method: 'POST',
        headers: { ...tusHeaders, 'Upload-Length': '10' },
      });
      assert.equal(post.status, 404);
      for (const method of ['POST', 'DELETE', 'GET']) {
        const res = await fetch(url, { method, headers: tusHeaders });
        assert.deepEqual(
          [res.status, res.headers.get('allow'), ((await res.json()) as { errorCode: string }).errorCode],
          [405, 'HEAD, PATCH, OPTIONS', 'method_not_allowed'],
          method,
        );
      }
      const forged = url.replace(/\.[^.]+$/, '.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
      const wrongToken = await fetch(forged, { method: 'HEAD', headers: tusHeaders });
      assert.equal(wrongToken.status, 404);
      const noToken = await fetch(`${api.url}/v3/uploads/${created.body.uploadId}`, { method: 'HEAD', headers: tusHeaders });
      assert.equal(noToken.status, 404);
      const noVersion = await fetch(url, { method: 'HEAD' });
      assert.equal(noVersion.status, 412);
      assert.equal((await status(recordingId, created.body.uploadId)).body.phase, 'waiting');
    });

    it('an interrupted transfer resumes from the stored offset with a new client', async () => {
      const recordingId = await newRecording();
      const created = await createUpload(recordingId, { fileName: 'tone.wav', fileSize: tone.length });
      // The first client stops after its first chunk (a closed tab, a lost connection).
      await new Promise<void>((resolve, reject) => {
        const upload = new tus.Upload(tone, {
          uploadUrl: created.body.uploadUrl,
          chunkSize: 32 * 1024,
          retryDelays: [],
          onChunkComplete: () => void upload.abort().then(resolve, reject),
          onError: reject,
        });
        upload.start();
      });
      const head = await fetch(created.body.uploadUrl, { method: 'HEAD', headers: tusHeaders });
      assert.equal(head.headers.get('upload-offset'), String(32 * 1024));
      let resumedFrom = -1;
      await tusUpload(created.body.uploadUrl, tone, {
        onProgress: (sent) => {
          if (resumedFrom < 0) resumedFrom = sent;
        },
      });
      assert.ok(resumedFrom >= 32 * 1024, `resumed at ${resumedFrom}`);
      assert.deepEqual(await result(recordingId), { phase: 'ready', errorCode: null });
    });

    it('bytes that are not media: failed with processing_failed', async () => {
      const recordingId = await newRecording();
      const junk = Buffer.from('this is not audio at all\n'.repeat(200));
      const created = await createUpload(recordingId, { fileName: 'notes.txt', fileSize: junk.length });
      const failed = await counted.value('intake_media_ingestions_ended_total', { result: 'failed', error_code: 'processing_failed' });
      const failedEncodes = await counted.value('intake_media_phase_duration_seconds_count', { phase: 'encode', outcome: 'failed' });
      await tusUpload(created.body.uploadUrl, junk);
      assert.deepEqual(await result(recordingId), { phase: 'failed', errorCode: 'processing_failed' });
      assert.equal(
        await counted.value('intake_media_ingestions_ended_total', { result: 'failed', error_code: 'processing_failed' }),
        failed + 1,
      );
      assert.equal(
        await counted.value('intake_media_phase_duration_seconds_count', { phase: 'encode', outcome: 'failed' }),
        failedEncodes + 1,
      );
      assert.deepEqual((await status(recordingId, created.body.uploadId)).body, {
        recordingId,
        uploadId: created.body.uploadId,
        phase: 'failed',
        encodeProgress: null,
        errorCode: 'processing_failed',
      });
      assert.deepEqual((await recording(recordingId)).asset, { status: 'failed', url: null, errorCode: 'processing_failed' });
      const late = await cancel(recordingId, created.body.uploadId);
      assert.deepEqual([late.status, late.body.errorCode], [409, 'upload_failed']);
      // A failed attempt released the recording: a new upload may start.
      assert.equal((await createUpload(recordingId, { fileName: 'tone.wav', fileSize: tone.length })).status, 201);
    });

    it("an HLS playlist that references another recording's rendition: failed with processing_failed, nothing of the other file published", async () => {
      // Another recording, ready: its rendition is a file beside the uploads.
      const victimId = await newRecording();
      await tusUpload((await createUpload(victimId, { fileName: 'tone.wav', fileSize: tone.length })).body.uploadUrl as string, tone);
      assert.deepEqual(await result(victimId), { phase: 'ready', errorCode: null });
      const [renditionFile] = await readdir(path.join(mediaDir, 'renditions', victimId));
      const target = path.join(mediaDir, 'renditions', victimId, renditionFile!);
      const fromUploads = path.relative(uploadsDirectory(mediaDir), target);
      const playlist = Buffer.from(
        ['#EXTM3U', '#EXT-X-TARGETDURATION:30', '#EXTINF:20,', fromUploads, '#EXTINF:20,', target, '#EXT-X-ENDLIST', ''].join('\n'),
      );
      const recordingId = await newRecording();
      const created = await createUpload(recordingId, { fileName: 'call.m3u8', fileSize: playlist.length });
      const uploaded = async () => (await api.deps.metrics.uploadBytes.get()).values[0]?.value ?? 0;
      const before = await uploaded();
      await tusUpload(created.body.uploadUrl, playlist);
      // The tus endpoint counts what it received (intake_upload_bytes_total).
      assert.equal(await uploaded(), before + playlist.length);
      assert.deepEqual(await result(recordingId), { phase: 'failed', errorCode: 'processing_failed' });
      assert.deepEqual((await recording(recordingId)).asset, { status: 'failed', url: null, errorCode: 'processing_failed' });
      assert.equal(existsSync(path.join(mediaDir, 'renditions', recordingId)), false);
    });

    it('a declared fileSize over UPLOAD_MAX_BYTES: 413 upload_too_large, nothing stored', async () => {
      const smallApi = await startTestApi({
        pool,
        config: testConfig({ STORAGE_DIR: mediaDir, TEMPORAL_TASK_QUEUE: worker.taskQueue, UPLOAD_MAX_BYTES: '1000' }),
      });
      try {
        const recordingId = await newRecording();
        const res = await smallApi.request(`/v3/rest/recordings/${recordingId}/uploads`, {
          method: 'POST',
          headers: keyHeaders(),
          json: { fileName: 'big.wav', fileSize: 1001 },
        });
        assert.deepEqual([res.status, res.body.errorCode, res.body.maxBytes], [413, 'upload_too_large', 1000]);
        assert.equal(await ingestions(recordingId), 0);
        const fits = await smallApi.request(`/v3/rest/recordings/${recordingId}/uploads`, {
          method: 'POST',
          headers: keyHeaders(),
          json: { fileName: 'small.wav', fileSize: 1000 },
        });
        assert.equal(fits.status, 201);
        assert.equal((await cancel(recordingId, fits.body.uploadId)).status, 200);
      } finally {
        await smallApi.close();
      }
    });

    it('a per-organization storage quota while bytes arrive: the first bytes of an upload that does not fit are 413 storage_quota_exceeded (issue 29.12)', async () => {
      const quotaOrg = await createTestOrg(pool);
      const quota = 1000;
      const quotaApi = await startTestApi({
        pool,
        config: testConfig({ STORAGE_DIR: mediaDir, TEMPORAL_TASK_QUEUE: worker.taskQueue, UPLOAD_STORAGE_QUOTA_BYTES: String(quota) }),
      });
      const create = async (fileSize: number) => {
        const recordingId = await newRecording(quotaOrg);
        const res = await quotaApi.request(`/v3/rest/recordings/${recordingId}/uploads`, {
          method: 'POST',
          headers: keyHeaders(quotaOrg),
          json: { fileName: 'a.bin', fileSize },
        });
        assert.equal(res.status, 201, 'creates accept any fileSize the contract allows');
        return { recordingId, uploadId: res.body.uploadId as string, url: (res.body.uploadUrl as string).replace(api.url, quotaApi.url) };
      };
      try {
        const first = await create(600);
        const begun = await patch(first.url, 0, Buffer.alloc(10));
        assert.equal(begun.status, 204); // 600 of 1000 reserved
        const second = await create(500);
        const refused = await patch(second.url, 0, Buffer.alloc(10));
        assert.equal(refused.status, 413);
        const body = (await refused.json()) as { errorCode: string; quotaBytes: number; usedBytes: number };
        assert.deepEqual([body.errorCode, body.quotaBytes, body.usedBytes], ['storage_quota_exceeded', quota, 600]);
        const head = await fetch(second.url, { method: 'HEAD', headers: tusHeaders });
        assert.equal(head.headers.get('upload-offset'), '0', 'nothing of the refused upload was stored');
        // Cancelling the first frees its room.
        assert.equal(
          (
            await quotaApi.request(`/v3/rest/recordings/${first.recordingId}/uploads/${first.uploadId}`, {
              method: 'DELETE',
              headers: keyHeaders(quotaOrg),
            })
          ).status,
          200,
        );
        assert.equal((await patch(second.url, 0, Buffer.alloc(10))).status, 204);
        // Another organization has its own quota.
        const elsewhere = await newRecording(other);
        const theirs = await quotaApi.request(`/v3/rest/recordings/${elsewhere}/uploads`, {
          method: 'POST',
          headers: keyHeaders(other),
          json: { fileName: 'b.bin', fileSize: 900 },
        });
        assert.equal((await patch((theirs.body.uploadUrl as string).replace(api.url, quotaApi.url), 0, Buffer.alloc(10))).status, 204);
      } finally {
        await quotaApi.close();
      }
    });

    it("bytes go to the upload the URL's path names, whatever its query string says (issue 29.13)", async () => {
      const a = await createUpload(await newRecording(), { fileName: 'a.wav', fileSize: 100 });
      const bRecording = await newRecording();
      const b = await createUpload(bRecording, { fileName: 'b.wav', fileSize: 100 });
      assert.equal((await cancel(bRecording, b.body.uploadId)).status, 200);
      const bSegment = (b.body.uploadUrl as string).split('/').pop()!;
      const res = await patch(`${a.body.uploadUrl as string}?x=/${bSegment}`, 0, Buffer.alloc(10));
      assert.deepEqual([res.status, res.headers.get('upload-offset')], [204, '10']);
      const aHead = await fetch(a.body.uploadUrl as string, { method: 'HEAD', headers: tusHeaders });
      assert.equal(aHead.headers.get('upload-offset'), '10', "the bytes are the path's upload's");
      const bFile = path.join(uploadsDirectory(mediaDir), b.body.uploadId as string);
      assert.equal(existsSync(bFile) ? (await readFile(bFile)).length : 0, 0, 'nothing was written into the cancelled upload');
    });

    it('a lost finish signal: the workflow finds the complete upload at its deadline', async () => {
      const shortApi = await startTestApi({
        pool,
        config: testConfig({ STORAGE_DIR: mediaDir, TEMPORAL_TASK_QUEUE: worker.taskQueue, UPLOAD_TIMEOUT_SECONDS: '2' }),
      });
      try {
        const recordingId = await newRecording();
        const created = await shortApi.request(`/v3/rest/recordings/${recordingId}/uploads`, {
          method: 'POST',
          headers: keyHeaders(),
          json: { fileName: 't.wav', fileSize: tone.length },
        });
        const handle = api.temporal.client.workflow.getHandle(mediaIngestionWorkflowId(recordingId));
        const events = async () => (await handle.fetchHistory()).events ?? [];
        assert.ok(
          await waitFor(async () => (await events()).some((e) => e.timerStartedEventAttributes), 10_000, 50),
          'the workflow sleeps until its deadline',
        );
        // The bytes land in the store without passing the endpoint (as if its signal were lost).
        const store = new FileUploadStore(path.join(mediaDir, 'uploads'));
        await store.datastore.write(Readable.from([tone]), created.body.uploadId as string, 0);
        assert.equal((await status(recordingId, created.body.uploadId)).body.phase, 'waiting');
        assert.deepEqual(await result(recordingId), { phase: 'ready', errorCode: null });
        const history = await events();
        assert.ok(
          history.some((e) => e.timerFiredEventAttributes),
          'woken by its deadline',
        );
        assert.equal(
          history.some((e) => e.workflowExecutionSignaledEventAttributes),
          false,
          'no signal reached it',
        );
      } finally {
        await shortApi.close();
      }
    });
  });

  describe('timeout', () => {
    let shortApi: TestApi;
    before(async () => {
      shortApi = await startTestApi({
        pool,
        config: testConfig({ STORAGE_DIR: mediaDir, TEMPORAL_TASK_QUEUE: worker.taskQueue, UPLOAD_TIMEOUT_SECONDS: '2' }),
      });
    });
    after(async () => shortApi?.close());
    const createShort = (recordingId: string, fileSize: number) =>
      shortApi.request(`/v3/rest/recordings/${recordingId}/uploads`, {
        method: 'POST',
        headers: keyHeaders(),
        json: { fileName: 't.wav', fileSize },
      });

    it('no byte within timeoutSeconds: cancelled', async () => {
      const recordingId = await newRecording();
      const created = await createShort(recordingId, tone.length);
      assert.equal(created.body.timeoutSeconds, 2);
      assert.deepEqual(await result(recordingId), { phase: 'cancelled', errorCode: null });
      assert.deepEqual((await status(recordingId, created.body.uploadId)).body.phase, 'cancelled');
      assert.equal((await recording(recordingId)).asset.status, 'cancelled');
      // An expired attempt is not returned to an identical retry: a new one is created.
      const retry = await createShort(recordingId, tone.length);
      assert.equal(retry.status, 201);
      assert.notEqual(retry.body.uploadId, created.body.uploadId);
    });

    it('begun but unfinished by the deadline: failed with upload_expired; further bytes are refused', async () => {
      const recordingId = await newRecording();
      const created = await createShort(recordingId, tone.length);
      assert.equal((await patch(created.body.uploadUrl, 0, tone.subarray(0, 1000))).status, 204);
      assert.deepEqual(await result(recordingId), { phase: 'failed', errorCode: 'upload_expired' });
      assert.deepEqual((await status(recordingId, created.body.uploadId)).body, {
        recordingId,
        uploadId: created.body.uploadId,
        phase: 'failed',
        encodeProgress: null,
        errorCode: 'upload_expired',
      });
      assert.deepEqual((await recording(recordingId)).asset, { status: 'failed', url: null, errorCode: 'upload_expired' });
      const late = await patch(created.body.uploadUrl, 1000, tone.subarray(1000, 2000));
      assert.equal(late.status, 410);
    });

    it('bytes keep arriving: the deadline moves with the latest byte', async () => {
      const recordingId = await newRecording();
      const created = await createShort(recordingId, tone.length);
      const step = Math.ceil(tone.length / 5);
      const started = Date.now();
      for (let offset = 0; offset < tone.length; offset += step) {
        const res = await patch(created.body.uploadUrl, offset, tone.subarray(offset, offset + step));
        assert.equal(res.status, 204);
        if (offset + step < tone.length) await new Promise((r) => setTimeout(r, 700));
      }
      // The transfer outlasted the 2 s timeout: only a deadline that moves with each byte lets it finish.
      assert.ok(Date.now() - started > 2000);
      assert.deepEqual(await result(recordingId), { phase: 'ready', errorCode: null });
    });
  });

  it('reports encodeProgress (0 to 100) while encoding, null outside it', async () => {
    const recordingId = await newRecording();
    const long = path.join(mediaDir, 'long.wav');
    await writeTone(long, { frequency: 220, seconds: 900, sampleRate: 16000 });
    const data = await readFile(long);
    const created = await createUpload(recordingId, { fileName: 'long.wav', fileSize: data.length });
    await tusUpload(created.body.uploadUrl, data, { chunkSize: 8 * 1024 * 1024 });
    const seen: { phase: string; encodeProgress: number | null }[] = [];
    await eventually(
      async () => {
        const s = (await status(recordingId, created.body.uploadId)).body as { phase: string; encodeProgress: number | null };
        seen.push(s);
        return s;
      },
      (s) => s.phase === 'ready' || s.phase === 'failed',
      90_000,
    );
    const encoding = seen.filter((s) => s.phase === 'encoding');
    assert.ok(
      encoding.some((s) => Number.isInteger(s.encodeProgress) && (s.encodeProgress as number) > 0),
      JSON.stringify(seen),
    );
    assert.ok(
      encoding.every(
        (s) => s.encodeProgress === null || (Number.isInteger(s.encodeProgress) && s.encodeProgress >= 0 && s.encodeProgress <= 100),
      ),
    );
    assert.ok(seen.filter((s) => s.phase !== 'encoding').every((s) => s.encodeProgress === null));
    assert.deepEqual(await result(recordingId), { phase: 'ready', errorCode: null });
  });
});
