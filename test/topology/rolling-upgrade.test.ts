import { Client, Connection } from '@temporalio/client';
import { strict as assert } from 'node:assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../../src/dev/net.js';
import { startLocalPostgres, type LocalPostgres } from '../../src/dev/postgres.js';
import { readMigrations } from '../../src/db/migrate.js';
import { PROJECT_ROOT } from '../../src/paths.js';
import { assistantMessage, feedbackEvent, userMessage } from '../../harness/agents.js';
import { TEST_OPERATOR_TOKEN, TEST_SIGNING_SECRET, testConfig, testDataConverter } from '../../harness/config.js';
import { isMp4, writeTone } from '../../harness/media.js';
import { appliedMigrations } from '../../harness/stack.js';
import { eventually, httpStatus, waitFor } from '../../harness/wait.js';
import { releaseCli, releaseTree, type ReleaseTree } from '../helpers/release-tree.js';
import type { ReleaseFixture } from '../upgrade/release-fixture.js';
import { mediaIngestionWorkflowId } from '../../workflows/media-ingestion/contract.js';
import { productionBuild } from '../../harness/production-build.js';
import { startTemporalCluster, type TemporalCluster } from '../../harness/temporal-cluster.js';
import { pidOfWorkerIdentity } from '../../src/temporal/worker.js';

interface Signal {
  sessionId: string;
  eventExternalId: string;
  source: string;
  kind: string;
  rating: string | null;
}

/**
 * docs/operations.md, Upgrades, done on the production Temporal server: the previous release's API
 * and worker (its own code and dependencies) hold work in flight; the new API starts beside them and
 * migrates the schema under them; the new worker joins the same task queues; requests go through
 * both APIs while both workers poll; then the old processes stop (SIGTERM). Every session is
 * processed to its end, every response metered and every rating turned into a signal once, every
 * upload started on either version is encoded, and no workflow fails.
 */
describe('a rolling upgrade from the previous release, with work in flight', function () {
  this.timeout(20 * 60_000);
  let dir: string;
  let postgres: LocalPostgres;
  let cluster: TemporalCluster;
  let temporal: Client;
  let release: ReleaseTree;
  let env: Record<string, string>;
  let oldUrl: string;
  const children: ChildProcess[] = [];
  let db: pg.Client | undefined;

  const launch = (name: string, cwd: string, node: string, args: string[], extra: Record<string, string> = {}) => {
    const log = createWriteStream(path.join(dir, `${name}.log`));
    const child = spawn(node, args, { cwd, env: { ...env, ...extra }, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.pipe(log);
    child.stderr.pipe(log);
    children.push(child);
    return child;
  };
  const ready = async (name: string, url: string) =>
    assert.ok(
      await waitFor(async () => (await httpStatus(`${url}/readyz`)) === 200, 180_000),
      `${name} is not ready (see ${dir}/${name}.log)`,
    );
  /** The identities (`pid@host`) polling the main task queue's workflow tasks. */
  const pollers = async () => {
    const response = await temporal.workflowService.describeTaskQueue({
      namespace: 'default',
      taskQueue: { name: 'intake' },
      taskQueueType: 1, // TASK_QUEUE_TYPE_WORKFLOW
    });
    return (response.pollers ?? []).map((p) => pidOfWorkerIdentity(p.identity));
  };
  const polling = async (child: ChildProcess) =>
    assert.ok(await waitFor(async () => (await pollers()).includes(child.pid!), 180_000, 500), `worker ${child.pid} polls the task queue`);
  /** Why a recording's media is not ready (for a failing assertion): its workflow's pending work, and the last log lines of the APIs (a finished upload's signal) and the workers. */
  const mediaDiagnosis = async (recordingId: string) => {
    const described = await temporal.workflow.getHandle(mediaIngestionWorkflowId(recordingId)).describe();
    const pending = (described.raw.pendingActivities ?? []).map((a) => ({
      type: a.activityType?.name,
      state: a.state,
      attempt: a.attempt,
      worker: a.lastWorkerIdentity,
      failure: a.lastFailure?.message,
      startedAt: a.lastStartedTime?.seconds?.toString(),
      heartbeatAt: a.lastHeartbeatTime?.seconds?.toString(),
    }));
    const logs: Record<string, string[]> = {};
    for (const name of ['api-old', 'api-new', 'worker-old', 'worker-new'])
      logs[name] = (await readFile(path.join(dir, `${name}.log`), 'utf8').catch(() => '')).trim().split('\n').slice(-15);
    return JSON.stringify({ status: described.status.name, now: Math.floor(Date.now() / 1000), pending, logs }, null, 1);
  };
  const stop = async (child: ChildProcess) => {
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const [code] = (await exited) as [number | null];
    return code;
  };

  before(async function () {
    this.timeout(30 * 60_000);
    dir = await mkdtemp(path.join(os.tmpdir(), 'intake-upgrade-'));
    await chmod(dir, 0o755);
    const previous = JSON.parse(
      await readFile(path.join(PROJECT_ROOT, 'test', 'fixtures', 'releases', '0.1.0', 'release.json'), 'utf8'),
    ) as ReleaseFixture;
    [release] = await Promise.all([releaseTree(previous.commit), productionBuild()]);
    postgres = await startLocalPostgres({ dataDir: path.join(dir, 'pg'), port: await freePort(), persistent: false, fast: true });
    await postgres.createDatabase('intake');
    cluster = await startTemporalCluster({ postgresUrl: postgres.url('postgres'), dir: path.join(dir, 'temporal') });
    temporal = new Client({ connection: await Connection.connect({ address: cluster.address }), dataConverter: testDataConverter() });
    const payloadKey = testConfig().temporal.payloadKeys![0]!;
    const oldPort = await freePort();
    oldUrl = `http://127.0.0.1:${oldPort}`;
    // What both versions share, as a fleet's processes would: the database, Temporal, the payload key,
    // the secrets, and the upload and media stores (file stores on one shared directory here).
    env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? dir,
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      DATABASE_URL: postgres.url('intake'),
      TEMPORAL_ADDRESS: cluster.address,
      TEMPORAL_PAYLOAD_KEYS: `${payloadKey.id}:${Buffer.from(payloadKey.key).toString('base64')}`,
      SIGNING_SECRET: TEST_SIGNING_SECRET,
      OPERATOR_TOKEN: TEST_OPERATOR_TOKEN,
      STORAGE_DIR: path.join(dir, 'storage'),
      TOOLS_DIR: path.join(PROJECT_ROOT, '.tools'),
      PUBLIC_BASE_URL: oldUrl,
      METRICS_PORT: 'off',
      HOST: '127.0.0.1',
      AGENT_WORKFLOW_SIGNAL_SECONDS: '0',
      // An activity task the server hands the old worker's poll as that worker stops is never run there:
      // it comes back after its heartbeat timeout (temporalio/sdk-rust#1080; CI saw an encode wait out the default 120 s). Both
      // versions read this setting; 5 s keeps that retry inside the waits below.
      MEDIA_HEARTBEAT_TIMEOUT_SECONDS: '5',
    };
    await writeTone(path.join(dir, 'tone.wav'), { seconds: 2 });
  });

  after(async function () {
    this.timeout(120_000);
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await db?.end().catch(() => undefined);
    await temporal?.connection.close();
    await cluster?.stop();
    await postgres?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('old and new side by side: nothing lost, nothing counted twice, no workflow failed', async () => {
    const tone = await readFile(path.join(dir, 'tone.wav'));
    const half = Math.floor(tone.length / 2);

    // The previous release runs alone: its API applies its migrations.
    const oldApi = launch('api-old', release.dir, release.node, ['--import', 'tsx', 'src/main/api.ts'], { PORT: new URL(oldUrl).port });
    await ready('api-old', oldUrl);
    const oldWorker = launch('worker-old', release.dir, release.node, ['--import', 'tsx', 'src/main/worker.ts']);
    await polling(oldWorker);
    const cli = (...args: string[]) => releaseCli(release, env, ...args);
    const { organizationId } = await cli('org', 'create', '--name', 'Rolling');
    const { apiKey } = await cli('api-key', 'create', '--org', organizationId);
    await cli('credits', 'add', '--org', organizationId, '--amount', '1000');
    const { applicationId } = await cli('agent-app', 'create', '--org', organizationId, '--name', 'Bot', '--agent-key', 'bot');
    const { secret } = await cli('agent-app', 'secret', '--app', applicationId);

    const call = async (
      base: string,
      method: string,
      p: string,
      json?: unknown,
      headers: Record<string, string> = { 'X-Service-Api-Key': apiKey },
    ) => {
      const res = await fetch(`${base}${p}`, {
        method,
        headers: { ...headers, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(json === undefined ? {} : { body: JSON.stringify(json) }),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : null };
    };
    /** Odd sequences are the user's, even ones the assistant's final answers. */
    const exchange = (from: number, to: number) =>
      Array.from({ length: to - from + 1 }, (_, i) => from + i).map((n) =>
        n % 2
          ? userMessage(n, `Question ${n}: how do I export a report?`)
          : assistantMessage(n, `Answer ${n}: use Reports, then Export. Sorry for the trouble.`),
      );
    const ingest = async (base: string, externalSessionId: string, events: unknown[], status = 'open') => {
      const res = await call(
        base,
        'POST',
        '/v3/rest/agent-conversations/ingest',
        { agentKey: 'bot', externalSessionId, status, participants: [], events },
        { 'X-Service-Agent-Key': secret },
      );
      assert.equal(res.status, 202, JSON.stringify(res.body));
      return res.body.sessionId as string;
    };
    const newUpload = async (base: string) => {
      const recording = await call(base, 'POST', '/v3/rest/recordings', { record: { externalId: `up-${Math.random()}` } });
      assert.equal(recording.status, 201, JSON.stringify(recording.body));
      const upload = await call(base, 'POST', `/v3/rest/recordings/${recording.body.id}/uploads`, {
        fileName: 'tone.wav',
        fileSize: tone.length,
      });
      assert.equal(upload.status, 201, JSON.stringify(upload.body));
      return {
        recordingId: recording.body.id as string,
        path: new URL(upload.body.uploadUrl as string).pathname + new URL(upload.body.uploadUrl as string).search,
      };
    };
    const send = async (base: string, uploadPath: string, from: number, to: number) => {
      const res = await fetch(`${base}${uploadPath}`, {
        method: 'PATCH',
        headers: { 'Tus-Resumable': '1.0.0', 'Upload-Offset': String(from), 'Content-Type': 'application/offset+octet-stream' },
        body: tone.subarray(from, to),
      });
      assert.equal(res.status, 204, `PATCH ${from}-${to} through ${base}: ${res.status}`);
    };

    // Work in flight on the previous release: a session processed so far, one waiting at a gap, an
    // upload half sent (its media ingestion workflow waits for the rest).
    const chat1 = await ingest(oldUrl, 'chat-1', exchange(1, 4));
    const chat2 = await ingest(oldUrl, 'chat-2', [...exchange(1, 2), ...exchange(4, 4)]);
    const upload1 = await newUpload(oldUrl);
    await send(oldUrl, upload1.path, 0, half);
    const inFlight = await eventually(
      () => call(oldUrl, 'GET', `/v3/rest/agent-conversations/sessions/${chat1}`),
      (r) => r.body?.processedThroughSequence === 4,
      60_000,
    );
    assert.equal(inFlight.body.processedThroughSequence, 4, 'the release processes its work');

    // The new version's API starts beside it and migrates the schema under the running release.
    const newPort = await freePort();
    const newUrl = `http://127.0.0.1:${newPort}`;
    launch('api-new', PROJECT_ROOT, process.execPath, [path.join(PROJECT_ROOT, 'dist', 'src', 'main', 'api.js')], {
      PORT: String(newPort),
    });
    await ready('api-new', newUrl);
    db = new pg.Client({ connectionString: postgres.url('intake') });
    // A failing assertion leaves it open until after(), which stops PostgreSQL under it.
    db.on('error', () => undefined);
    await db.connect();
    assert.deepEqual(
      await appliedMigrations(postgres.url('intake')),
      (await readMigrations()).map((m) => m.name),
      'the new API applied every migration',
    );
    const newWorker = launch('worker-new', PROJECT_ROOT, process.execPath, [path.join(PROJECT_ROOT, 'dist', 'src', 'main', 'worker.js')], {
      WORKFLOW_BUNDLE_PATH: path.join(PROJECT_ROOT, 'dist', 'workflow-bundle.js'),
    });
    await polling(newWorker);
    assert.ok((await pollers()).includes(oldWorker.pid!), 'both versions poll the same task queue');

    // Both versions serve: requests alternate between the two APIs while both workers poll.
    await ingest(newUrl, 'chat-1', exchange(5, 6));
    await ingest(oldUrl, 'chat-1', [...exchange(7, 8), feedbackEvent(9, 'e6', 'negative')]);
    await ingest(newUrl, 'chat-2', [...exchange(3, 3), ...exchange(5, 6)], 'ended');
    const chat3 = await ingest(newUrl, 'chat-3', [...exchange(1, 2), feedbackEvent(3, 'e2', 'positive')], 'ended');
    await send(newUrl, upload1.path, half, tone.length);
    const upload2 = await newUpload(oldUrl);
    await send(oldUrl, upload2.path, 0, half);
    await send(newUrl, upload2.path, half, tone.length);
    const upload3 = await newUpload(newUrl);
    await send(oldUrl, upload3.path, 0, tone.length);
    await ingest(oldUrl, 'chat-1', exchange(10, 10), 'ended');

    // The old processes leave, as an orchestrator replaces them: SIGTERM, drained.
    assert.equal(await stop(oldWorker), 0, 'the old worker drained and exited 0');
    assert.equal(await stop(oldApi), 0, 'the old API drained and exited 0');

    // Everything finishes on the new version (`eventually` answers its last probe when time runs out:
    // the assertions after it decide).
    const sessions = { [chat1]: 10, [chat2]: 6, [chat3]: 3 };
    for (const [id, last] of Object.entries(sessions)) {
      const s = await eventually(
        () => call(newUrl, 'GET', `/v3/rest/agent-conversations/sessions/${id}`),
        (r) => r.body?.processedThroughSequence === last,
        120_000,
      );
      assert.equal(s.body.processedThroughSequence, last, `session ${id} processed to its end`);
      assert.equal(s.body.eventCount, last);
      assert.equal(s.body.status, 'ended');
    }
    // Metered once: one unit per final assistant answer (chat-1: 2, 4, 6, 8, 10; chat-2: 2, 4, 6; chat-3: 2).
    const usage = await eventually(
      () => call(newUrl, 'GET', '/v3/rest/usage?from=2026-01-01T00:00:00Z&to=2100-01-01T00:00:00Z'),
      (r) => r.body?.quantity >= 9,
      60_000,
    );
    assert.equal(usage.body.quantity, 9, JSON.stringify(usage.body));
    // Each rating once, and every answer analysed (its qualitative signals) once.
    const signals = await eventually(
      () => call(newUrl, 'GET', '/v3/rest/signals?limit=100'),
      (r) =>
        new Set(
          (r.body?.signals ?? [])
            .filter((x: Signal) => x.source === 'qualitative_inference')
            .map((x: Signal) => `${x.sessionId}/${x.eventExternalId}`),
        ).size >= 9,
      60_000,
    );
    const all = signals.body.signals as Signal[];
    assert.deepEqual(
      all
        .filter((x) => x.source === 'explicit_feedback')
        .map((x) => x.rating)
        .sort(),
      ['negative', 'positive'],
      'each rating once',
    );
    const analysed = all.filter((x) => x.source === 'qualitative_inference');
    assert.equal(new Set(analysed.map((x) => `${x.sessionId}/${x.eventExternalId}`)).size, 9, 'every answer analysed');
    const kinds = analysed.map((x) => `${x.sessionId}/${x.eventExternalId}/${x.kind}`);
    assert.equal(new Set(kinds).size, kinds.length, 'no answer analysed twice');
    for (const u of [upload1, upload2, upload3]) {
      const recording = await eventually(
        () => call(newUrl, 'GET', `/v3/rest/recordings/${u.recordingId}`),
        (r) => r.body?.asset?.status === 'completed',
        120_000,
      );
      if (recording.body.asset?.status !== 'completed')
        assert.fail(`recording ${u.recordingId}: ${JSON.stringify(recording.body.asset)} ${await mediaDiagnosis(u.recordingId)}`);
      // The link names PUBLIC_BASE_URL (the old API's address here): the new one answers it.
      const link = new URL(recording.body.asset.url as string);
      const media = await fetch(`${newUrl}${link.pathname}${link.search}`, { headers: { Range: 'bytes=0-15' } });
      assert.equal(media.status, 206);
      assert.ok(isMp4(new Uint8Array(await media.arrayBuffer())));
    }
    const renditions = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM recordings WHERE asset_status = 'completed'");
    assert.equal(renditions.rows[0]!.n, 3);
    const failed: string[] = [];
    for await (const w of temporal.workflow.list({
      query: 'ExecutionStatus = "Failed" OR ExecutionStatus = "Terminated" OR ExecutionStatus = "TimedOut"',
    }))
      failed.push(`${w.type} ${w.workflowId}`);
    assert.deepEqual(failed, [], 'no workflow failed');
  });
});
