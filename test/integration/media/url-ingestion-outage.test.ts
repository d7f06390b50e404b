import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { createDatabasePool } from '../../../src/db/pool.js';
import { connectTemporalClient, type TemporalClient } from '../../../src/temporal/connection.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { testConfig } from '../../../harness/config.js';
import { createTestOrg, createTestUser, type TestOrg } from '../../../harness/fixtures.js';
import { createTestDatabase, testStack } from '../../../harness/stack.js';
import { TcpProxy } from '../../helpers/tcp-proxy.js';
import { eventually } from '../../../harness/wait.js';

/** A recording with URL media needs its ingestion workflow: without Temporal, nothing is stored. */
describe('recording with assetUrl while Temporal is unreachable', function () {
  // Each outage leaves the gRPC client reconnecting with backoff: the next test may wait a while for it.
  this.timeout(240_000);
  let pool: DatabasePool;
  let proxy: TcpProxy;
  let temporal: TemporalClient;
  let api: TestApi;
  let org: TestOrg;
  let databaseUrl: string;
  const storageDir = path.join(os.tmpdir(), `intake-outage-${randomUUID()}`);

  before(async () => {
    databaseUrl = await createTestDatabase();
    pool = await createDatabasePool(databaseUrl);
    proxy = await TcpProxy.start(Number((await testStack()).temporal.address.split(':')[1]));
    const config = testConfig({ STORAGE_DIR: storageDir });
    temporal = await connectTemporalClient({ temporal: { ...config.temporal, address: `127.0.0.1:${proxy.port}` } });
    api = await startTestApi({ pool, config, temporal });
    org = await createTestOrg(pool);
  });
  after(async () => {
    await api?.close();
    await temporal?.connection.close();
    await proxy?.down();
    await pool?.end();
    await rm(storageDir, { recursive: true, force: true });
  });

  const create = (body: object) =>
    api.request('/v3/rest/recordings', { method: 'POST', headers: { 'X-Service-Api-Key': org.apiKey }, json: body });
  const stored = (externalId: string) =>
    pool.oneFirst(sql.type(z.object({ n: z.number() }))`
    SELECT count(*)::int AS n FROM metadata_records WHERE external_id = ${externalId}`);

  it('503 temporal_unavailable, nothing stored; the retry succeeds once Temporal is back', async () => {
    const externalId = randomUUID();
    await proxy.down();
    const failed = await create({ record: { externalId }, assetUrl: 'https://media.example.com/call.mp3' });
    assert.deepEqual([failed.status, failed.body.errorCode], [503, 'temporal_unavailable']);
    assert.ok(!JSON.stringify(failed.body).includes('127.0.0.1'));
    assert.equal(await stored(externalId), 0, 'the external id is not reserved');
    const withoutMedia = await create({ record: { externalId: randomUUID() } });
    assert.equal(withoutMedia.status, 201, 'a recording without URL media does not need Temporal');
    await proxy.up();
    // The client's gRPC connection comes back with backoff: retry as an integrator would (each
    // 503 meanwhile stores nothing, or the external id would be taken and the retry a 409).
    const retried = await eventually(
      () => create({ record: { externalId }, assetUrl: 'https://media.example.com/call.mp3' }),
      (r) => r.status !== 503,
      120_000,
    );
    assert.equal(retried.status, 201);
    assert.equal(retried.body.asset.status, 'queued');
    const ingestions = await pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM media_ingestions WHERE recording_id = ${retried.body.id as string} AND kind = 'url' AND phase = 'waiting'`);
    assert.equal(ingestions, 1);
  });

  it('an invalid body is a 400 before any workflow starts', async () => {
    const res = await create({ record: { externalId: ' ' }, assetUrl: 'http://10.0.0.1/x.mp3' });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body.errors.map((e: { path: string }) => e.path).sort(), ['body.assetUrl', 'body.record.externalId']);
  });

  describe('direct uploads', () => {
    const uploadsStored = (recordingId: string) =>
      pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM media_ingestions WHERE recording_id = ${recordingId}`);
    const headers = () => ({ 'X-Service-Api-Key': org.apiKey });

    it('create: 503 and nothing stored while Temporal is down; cancel: done without Temporal, the next upload supersedes the run', async () => {
      const recording = await create({ record: { externalId: randomUUID() } });
      const recordingId = recording.body.id as string;
      const body = { fileName: 'call.wav', fileSize: 1000 };
      await proxy.down();
      const failed = await api.request(`/v3/rest/recordings/${recordingId}/uploads`, { method: 'POST', headers: headers(), json: body });
      assert.deepEqual([failed.status, failed.body.errorCode], [503, 'temporal_unavailable']);
      assert.equal(await uploadsStored(recordingId), 0);
      assert.equal(
        existsSync(path.join(storageDir, 'uploads')) ? (await readdir(path.join(storageDir, 'uploads'))).length : 0,
        0,
        'no tus resource left behind',
      );
      await proxy.up();
      const created = await eventually(
        () => api.request(`/v3/rest/recordings/${recordingId}/uploads`, { method: 'POST', headers: headers(), json: body }),
        (r) => r.status !== 503,
        120_000,
      );
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const uploadPath = `/v3/rest/recordings/${recordingId}/uploads/${created.body.uploadId as string}`;
      await proxy.down();
      // The cancel is committed first; telling the workflow is best effort (it reads the phase when it wakes).
      const cancelled = await api.request(uploadPath, { method: 'DELETE', headers: headers() });
      assert.deepEqual([cancelled.status, cancelled.body.phase], [200, 'cancelled']);
      assert.equal((await api.request(uploadPath, { headers: headers() })).body.phase, 'cancelled', 'the status is read without Temporal');
      await proxy.up();
      // The recording is released: a new upload supersedes the run that was not told.
      const next = await eventually(
        () => api.request(`/v3/rest/recordings/${recordingId}/uploads`, { method: 'POST', headers: headers(), json: body }),
        (r) => r.status !== 503,
        120_000,
      );
      assert.equal(next.status, 201, JSON.stringify(next.body));
      assert.notEqual(next.body.uploadId, created.body.uploadId);
    });

    it('a slow Temporal holds no lock and no connection: reads go on while upload creates wait, and the creates store nothing', async () => {
      const small = await createDatabasePool(databaseUrl, { poolSize: 2 });
      const slowApi = await startTestApi({ pool: small, config: testConfig({ STORAGE_DIR: storageDir }), temporal });
      try {
        const ids: string[] = [];
        for (let i = 0; i < 3; i++) ids.push((await create({ record: { externalId: randomUUID() } })).body.id as string);
        proxy.stall();
        const finished: string[] = [];
        const creates = ids.map(async (id) => {
          const res = await slowApi.request(`/v3/rest/recordings/${id}/uploads`, {
            method: 'POST',
            headers: headers(),
            json: { fileName: 'a.wav', fileSize: 100 },
          });
          finished.push('create');
          return res;
        });
        // Three creates wait on Temporal; with two connections, a read must still get one.
        await eventually(
          async () =>
            await pool.oneFirst(sql.type(z.object({ n: z.number() }))`
          SELECT count(*)::int AS n FROM media_ingestions WHERE recording_id = ANY(${sql.array(ids, 'uuid')})`),
          (n) => n === 3,
          10_000,
        );
        const read = await slowApi.request(`/v3/rest/recordings/${ids[0]!}`, { headers: headers() });
        finished.push('read');
        assert.equal(read.status, 200);
        const results = await Promise.all(creates);
        assert.deepEqual(
          results.map((r) => [r.status, r.body.errorCode]),
          ids.map(() => [503, 'temporal_unavailable']),
        );
        assert.equal(finished[0], 'read', `the read answered first: ${finished.join(', ')}`);
        for (const id of ids) assert.equal(await uploadsStored(id), 0, 'compensated: nothing stored');
      } finally {
        proxy.flow();
        await slowApi.close();
        await small.end();
      }
    });
  });

  it('meeting join: 503 without internals while Temporal is down, nothing stored', async () => {
    const user = await createTestUser(pool, org.organizationId);
    const join = () =>
      api.request('/v3/rest/recordings/meeting-joins', {
        method: 'POST',
        headers: { Authorization: `Bearer ${user.accessToken}` },
        json: { type: 'meetingUrl', joinUrl: 'https://meet.google.com/out-agex-tst' },
      });
    await proxy.down();
    const failed = await join();
    assert.deepEqual([failed.status, failed.body.errorCode], [503, 'temporal_unavailable']);
    assert.ok(!JSON.stringify(failed.body).includes('127.0.0.1'));
    const stored = await pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM meeting_joins`);
    assert.equal(stored, 0);
    await proxy.up();
  });
});
