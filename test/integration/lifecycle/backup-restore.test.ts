import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { migrate } from '../../../src/db/migrate.js';
import { createDatabasePool } from '../../../src/db/pool.js';
import type { LocalTemporal } from '../../../src/dev/temporal-server.js';
import { mediaWorkflowSettings } from '../../../src/recordings/media.js';
import { connectTemporalClient } from '../../../src/temporal/connection.js';
import { MEDIA_RECONCILER_WORKFLOW, type MediaReconcilerInput } from '../../../workflows/media-reconciler/contract.js';
import { assistantMessage, createTestAgentApp, sessionRequest, userMessage, type TestAgentApp } from '../../../harness/agents.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { testConfig } from '../../../harness/config.js';
import { createTestOrg, type TestOrg } from '../../../harness/fixtures.js';
import { isMp4, writeTone } from '../../../harness/media.js';
import { createEmptyDatabase, createTestDatabase, startTestTemporal, testStack } from '../../../harness/stack.js';
import { eventually } from '../../../harness/wait.js';
import { loopbackMediaDeps, startTestWorker, type TestWorker } from '../../../harness/worker.js';
import { postgresClientTools } from '../../helpers/postgres-tools.js';

const exec = promisify(execFile);

interface Stack {
  dir: string;
  url: string;
  pool: DatabasePool;
  worker: TestWorker;
  api: TestApi;
}

/** A worker and an API on one database, media directory and Temporal server. */
async function startStack(url: string, dir: string, temporalAddress: string): Promise<Stack> {
  const pool = await createDatabasePool(url);
  const worker = await startTestWorker(pool, { deps: loopbackMediaDeps(dir), temporalAddress });
  const config = testConfig({ STORAGE_DIR: dir, TEMPORAL_TASK_QUEUE: worker.taskQueue });
  const temporal = await connectTemporalClient({ temporal: { ...config.temporal, address: temporalAddress } });
  const api = await startTestApi({ pool, databaseUrl: url, config, temporal });
  return { dir, url, pool, worker, api };
}

async function stopStack(s: Stack | undefined): Promise<void> {
  if (!s) return;
  await s.api.close();
  await s.api.temporal.connection.close();
  await s.worker.stop();
  await s.pool.end();
}

/**
 * docs/operations.md, Backup and restore, as written: `pg_dump -Fc` of Intake's database while
 * integrators write (agent ingests, recordings, tus chunks), then a copy of the media store; both
 * restored into an empty stack (a new database, media directory and Temporal server), which then
 * serves every recording, session and upload the backup held, and finishes what was in flight.
 */
describe('backup under load, restored into an empty stack', function () {
  this.timeout(300_000);
  let a: Stack | undefined;
  let b: Stack | undefined;
  let temporalB: LocalTemporal | undefined;
  let work: string;
  let org: TestOrg;
  let app: TestAgentApp;
  let tone: Buffer;

  before(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), 'intake-backup-'));
    await writeTone(path.join(work, 'tone.wav'), { seconds: 2 });
    tone = await readFile(path.join(work, 'tone.wav'));
    a = await startStack(await createTestDatabase(), path.join(work, 'media-a'), (await testStack()).temporal.address);
    org = await createTestOrg(a.pool, { credits: 10_000 });
    app = await createTestAgentApp(a.pool, org, 'backup-bot');
  });

  after(async () => {
    await stopStack(b);
    await stopStack(a);
    await temporalB?.stop();
    await rm(work, { recursive: true, force: true });
  });

  const key = () => ({ 'X-Service-Api-Key': org.apiKey });
  const tus = (offset: number) => ({
    'Tus-Resumable': '1.0.0',
    'Upload-Offset': String(offset),
    'Content-Type': 'application/offset+octet-stream',
  });
  const onStack = (uploadUrl: string, s: Stack) => uploadUrl.replace(/^http:\/\/[^/]+/, s.api.url);

  async function newUpload(s: Stack): Promise<{ recordingId: string; uploadUrl: string }> {
    const recording = await s.api.request('/v3/rest/recordings', {
      method: 'POST',
      headers: key(),
      json: { record: { externalId: `up-${randomUUID()}` } },
    });
    assert.equal(recording.status, 201, JSON.stringify(recording.body));
    const upload = await s.api.request(`/v3/rest/recordings/${recording.body.id}/uploads`, {
      method: 'POST',
      headers: key(),
      json: { fileName: 'tone.wav', fileSize: tone.length },
    });
    assert.equal(upload.status, 201, JSON.stringify(upload.body));
    return { recordingId: recording.body.id as string, uploadUrl: upload.body.uploadUrl as string };
  }

  async function send(uploadUrl: string, from: number, to: number): Promise<void> {
    const res = await fetch(uploadUrl, { method: 'PATCH', headers: tus(from), body: tone.subarray(from, to) });
    assert.equal(res.status, 204, `PATCH ${from}-${to}: ${res.status} ${await res.text()}`);
  }

  async function assertPlays(s: Stack, recordingId: string): Promise<void> {
    const recording = await eventually(
      () => s.api.request(`/v3/rest/recordings/${recordingId}`, { headers: key() }),
      (r) => r.body.asset?.status === 'completed',
      60_000,
    );
    assert.equal(recording.body.asset?.status, 'completed', `recording ${recordingId}: ${JSON.stringify(recording.body.asset)}`);
    const media = await fetch(recording.body.asset.url as string, { headers: { Range: 'bytes=0-15' } });
    assert.equal(media.status, 206);
    assert.ok(isMp4(new Uint8Array(await media.arrayBuffer())));
  }

  it('serves every recording, session and upload the backup held, and finishes the work in flight', async () => {
    const source = a!;
    // Before the load: two uploads encoded, four half sent (their clients resume after the restore).
    const encoded = [await newUpload(source), await newUpload(source)];
    for (const u of encoded) await send(u.uploadUrl, 0, tone.length);
    for (const u of encoded) await assertPlays(source, u.recordingId);
    const half = Math.floor(tone.length / 2);
    const partial = await Promise.all([1, 2, 3, 4].map(() => newUpload(source)));
    for (const u of partial) await send(u.uploadUrl, 0, half);

    // The load: five agent sessions growing, recordings with transcripts, and tus chunks appended to
    // the partial uploads (which stay short of their end: none finishes during the backup).
    let loading = true;
    const sequences = new Map<string, number>();
    const sessionLoad = async (n: number) => {
      while (loading) {
        const externalSessionId = `chat-${n}`;
        const next = (sequences.get(externalSessionId) ?? 0) + 1;
        const events = [userMessage(next, `Question ${next} about exports?`), assistantMessage(next + 1, `Answer ${next}: use Reports.`)];
        const res = await source.api.request('/v3/rest/agent-conversations/ingest', {
          method: 'POST',
          headers: { 'X-Service-Agent-Key': app.secret },
          json: sessionRequest(app, events, { externalSessionId }),
        });
        assert.equal(res.status, 202, JSON.stringify(res.body));
        sequences.set(externalSessionId, next + 1);
      }
    };
    const recordingLoad = async () => {
      while (loading) {
        const res = await source.api.request('/v3/rest/recordings', {
          method: 'POST',
          headers: key(),
          json: {
            record: { externalId: `call-${randomUUID()}` },
            transcript: { utterances: [0, 1, 2].map((i) => ({ startSec: i, endSec: i + 1, speaker: i % 2, text: `Line ${i}.` })) },
          },
        });
        assert.equal(res.status, 201, JSON.stringify(res.body));
      }
    };
    const offsets = new Map(partial.map((u) => [u.uploadUrl, half]));
    const uploadLoad = async () => {
      while (loading) {
        for (const u of partial) {
          const from = offsets.get(u.uploadUrl)!;
          const to = Math.min(from + 4096, tone.length - 1024);
          if (to <= from) continue;
          await send(u.uploadUrl, from, to);
          offsets.set(u.uploadUrl, to);
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    const load = Promise.all([
      sessionLoad(1),
      sessionLoad(2),
      sessionLoad(3),
      sessionLoad(4),
      sessionLoad(5),
      recordingLoad(),
      recordingLoad(),
      uploadLoad(),
    ]);

    // The backup, taken while that runs: the database first, then the media store.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const countRecordings = () => source.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM recordings`);
    const recordingsBefore = await countRecordings();
    const { pgDump, pgRestore } = await postgresClientTools();
    const dump = path.join(work, 'intake.dump');
    await exec(pgDump, ['--format=custom', '--file', dump, '--dbname', source.url]);
    await cp(source.dir, path.join(work, 'media-b'), { recursive: true });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    loading = false;
    await load;
    const recordingsAfter = await countRecordings();

    // The empty stack: a new Temporal server, an empty database, the copied media.
    temporalB = await startTestTemporal(path.join(work, 'temporal-b.log'));
    const urlB = await createEmptyDatabase();
    await exec(pgRestore, ['--no-owner', '--exit-on-error', '--dbname', urlB, dump]);
    assert.deepEqual((await migrate(urlB)).applied, [], 'the backup holds every migration');
    b = await startStack(urlB, path.join(work, 'media-b'), temporalB.address);
    const restored = b;

    const held = await restored.pool.anyFirst(sql.type(z.object({ id: z.string() }))`SELECT id FROM recordings`);
    assert.ok(held.length >= recordingsBefore, 'the backup holds what was written before it');
    assert.ok(held.length < recordingsAfter, 'and was taken while recordings were still being written');
    assert.ok(
      (await source.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM agent_events`)) >
        (await restored.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM agent_events`)),
      'and while agent events were still being ingested',
    );

    // The media reconciler (a Schedule, every few minutes in production) takes up the ingestions
    // whose workflows were in the old Temporal: uploads waiting for bytes wait again.
    const input: MediaReconcilerInput = { version: 1, olderThanSeconds: 0, settings: mediaWorkflowSettings(restored.api.deps.config) };
    await restored.api.temporal.client.workflow.execute(MEDIA_RECONCILER_WORKFLOW, {
      workflowId: `media-reconciler/${randomUUID()}`,
      taskQueue: restored.worker.taskQueue,
      args: [input],
    });

    // Every recording is served; the transcribed ones with their transcript, the encoded ones play.
    for (const id of held) {
      const res = await restored.api.request(`/v3/rest/recordings/${id}`, { headers: key() });
      assert.equal(res.status, 200, `recording ${id}: ${JSON.stringify(res.body)}`);
      if (res.body.transcript?.status === 'completed') {
        const transcript = await restored.api.request(`/v3/rest/recordings/${id}/transcript`, { headers: key() });
        assert.equal(transcript.status, 200);
        assert.equal(transcript.body.utterances.length, 3);
      }
    }
    for (const u of encoded) await assertPlays(restored, u.recordingId);

    // Every upload the backup held resumes from the offset the restored store reports, and plays.
    for (const u of partial) {
      const url = onStack(u.uploadUrl, restored);
      const head = await fetch(url, { method: 'HEAD', headers: { 'Tus-Resumable': '1.0.0' } });
      assert.equal(head.status, 200, `HEAD of a held upload: ${head.status}`);
      const offset = Number(head.headers.get('upload-offset'));
      assert.ok(offset >= half && offset < tone.length, `resumes mid-file (offset ${offset})`);
      await send(url, offset, tone.length);
      await assertPlays(restored, u.recordingId);
    }

    // Every session is served with all its stored events, and its processing completes on the new stack.
    const sessions = await restored.pool.any(
      sql.type(z.object({ id: z.string(), events: z.number() }))`
        SELECT s.id, (SELECT count(*)::int FROM agent_events e WHERE e.session_id = s.id) AS events FROM agent_sessions s`,
    );
    assert.equal(sessions.length, 5);
    for (const s of sessions) {
      const read = await eventually(
        () => restored.api.request(`/v3/rest/agent-conversations/sessions/${s.id}`, { headers: key() }),
        (r) => r.status === 200 && r.body.processedThroughSequence === r.body.highestSequence,
        60_000,
      );
      assert.equal(read.body.processedThroughSequence, read.body.highestSequence, `session ${s.id} processed to its last sequence`);
      assert.equal(read.body.eventCount, s.events);
      assert.ok(s.events >= 2);
    }
    const signals = await restored.api.request('/v3/rest/signals?limit=100', { headers: key() });
    assert.equal(signals.status, 200);
    assert.ok(signals.body.signals.length > 0, 'the restored sessions have their signals');
  });
});
