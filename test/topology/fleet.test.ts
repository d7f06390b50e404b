import { Client, Connection } from '@temporalio/client';
import { temporal as proto } from '@temporalio/proto';
import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, chmod } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { createApplication, issueCredential } from '../../src/agents/applications.js';
import { createDatabasePool } from '../../src/db/pool.js';
import { processedEvent } from '../../src/db/repositories/agent-processing.js';
import { PROJECT_ROOT } from '../../src/paths.js';
import { assistantMessage, feedbackEvent, userMessage } from '../../harness/agents.js';
import { TEST_SIGNING_SECRET, testDataConverter } from '../../harness/config.js';
import { createTestOrg } from '../../harness/fixtures.js';
import { eventually, waitFor } from '../../harness/wait.js';
import { sessionDrainerWorkflowId } from '../../workflows/session-drainer/contract.js';
import { isRunning, startFleet, type Fleet, type FleetProc } from '../../harness/fleet.js';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { mediaIngestionWorkflowId } from '../../src/temporal/ids.js';
import { pidOfWorkerIdentity } from '../../src/temporal/worker.js';
import type { TestS3 } from '../../harness/s3.js';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { meetingJoinIdFor } from '../../src/recordings/meeting-joins.js';
import { createTestUser } from '../../harness/fixtures.js';
import { createSignInUser, mcpAccessToken } from '../../harness/oauth-browser.js';
import { writeTone } from '../../harness/media.js';

/**
 * The fleet on one machine, as processes: PostgreSQL, the production Temporal server on it, two
 * API replicas and two workers, all from `npm run build` output (`node dist/...`, the prebuilt
 * workflow bundle), as harness/fleet.ts starts them. Requests alternate between the replicas; a
 * worker is killed with SIGKILL in the middle of the work, and nothing may be lost or counted twice.
 */
describe('fleet topology: two API replicas and two workers on the production Temporal server', function () {
  this.timeout(20 * 60_000);
  let fleet: Fleet;
  let temporal: Client;
  let pool: DatabasePool;
  let apis: string[] = [];
  let dir: string;
  let s3: TestS3;
  let env: Record<string, string>;
  let historyShards: number;
  let procs: FleetProc[];

  /** The pid of the worker running `workflowId`'s pending activity (of `activityType`, if given); worker identities are `pid@host`. */
  const activityWorkerPid = async (workflowId: string, activityType?: string) => {
    const handle = temporal.workflow.getHandle(workflowId);
    for (;;) {
      const pending = (await handle.describe()).raw.pendingActivities?.find((a) => !activityType || a.activityType?.name === activityType);
      const pid = pidOfWorkerIdentity(pending?.lastWorkerIdentity);
      if (pid !== null) return pid;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  /** The task queue's session drainer shards (docker-compose.yml's AGENT_DRAIN_SHARDS). */
  const shards = () => Number(env.AGENT_DRAIN_SHARDS);
  const drainingWorkerPid = () => activityWorkerPid(sessionDrainerWorkflowId('intake', 0, shards()));
  /** How many drainer shards each worker runs now, by pid (a shard between two calls is not counted). */
  const shardHolders = async () => {
    const holders = new Map<number, number>();
    for (let shard = 0; shard < shards(); shard++) {
      const pending = (await temporal.workflow.getHandle(sessionDrainerWorkflowId('intake', shard, shards())).describe()).raw
        .pendingActivities?.[0];
      const pid =
        pending?.state === proto.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED
          ? pidOfWorkerIdentity(pending.lastWorkerIdentity)
          : null;
      if (pid !== null) holders.set(pid, (holders.get(pid) ?? 0) + 1);
    }
    return holders;
  };
  /** The events a worker's drainer runs processed (its intake_agent_events_drained_total). */
  const drainedBy = async (proc: FleetProc) => {
    const text = await (await fetch(`http://127.0.0.1:${proc.metricsPort}/metrics`)).text();
    return Number(/^intake_agent_events_drained_total (\d+)/m.exec(text)?.[1] ?? 0);
  };
  /** Waits for a workflow's result through the cluster. */
  const resultOf = (workflowId: string): Promise<unknown> => temporal.workflow.getHandle(workflowId).result();
  let workers = 2;
  /** Kills the worker process `pid` with SIGKILL and starts another in its place, as an orchestrator would. */
  const replaceWorker = async (pid: number) => {
    const victim = procs.find((p) => p.child.pid === pid);
    assert.ok(victim, `worker process ${pid} is one of ours`);
    await fleet.kill(victim);
    await fleet.startWorker(`worker-${++workers}`);
    return victim.name;
  };
  let turn = 0;
  /** The next API replica, in turn. */
  const replica = () => apis[turn++ % apis.length]!;
  const request = async (url: string, init: RequestInit & { json?: unknown } = {}) => {
    const res = await fetch(url, {
      ...init,
      headers: { ...(init.json === undefined ? {} : { 'content-type': 'application/json' }), ...(init.headers as Record<string, string>) },
      ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) }),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };

  before(async function () {
    this.timeout(30 * 60_000);
    dir = await mkdtemp(path.join(os.tmpdir(), 'intake-fleet-'));
    await chmod(dir, 0o755);
    fleet = await startFleet({
      dir,
      apis: ['api-a', 'api-b'],
      workers: ['worker-a', 'worker-b'],
      // Test-only, on top of the file's: shorter waits, and the test's media server on this machine
      // (its name may resolve to loopback).
      extraEnv: { MEDIA_HEARTBEAT_TIMEOUT_SECONDS: '5', LOCAL_RECORDER_MEETING_SECONDS: '2', MEDIA_FETCH_ALLOWED_HOSTS: 'localhost' },
    });
    ({ s3, env, historyShards, procs } = fleet);
    apis = procs.filter((p) => p.role === 'api').map((p) => p.url!);
    // The test's own client of the cluster: results, and which worker runs an activity.
    temporal = new Client({ connection: await Connection.connect({ address: fleet.cluster.address }), dataConverter: testDataConverter() });
    pool = await createDatabasePool(fleet.databaseUrl);
  });

  after(async function () {
    this.timeout(120_000);
    await pool?.end();
    await temporal?.connection.close();
    await fleet?.stop();
  });

  it("intake doctor (the compiled CLI) reaches a worker through the cluster, which has docker-compose.yml's history shard count", async () => {
    assert.ok(historyShards >= 512, `NUM_HISTORY_SHARDS ${historyShards}`);
    const { stdout } = await promisify(execFile)(process.execPath, [path.join(PROJECT_ROOT, 'dist', 'src', 'cli', 'main.js'), 'doctor'], {
      env: { ...process.env, ...env, LOG_LEVEL: 'silent' },
    });
    const doctor = JSON.parse(stdout) as { ok: boolean; temporal: { historyShardCount: number; serverVersion: string } };
    assert.deepEqual([doctor.ok, doctor.temporal.historyShardCount, doctor.temporal.serverVersion], [true, historyShards, '1.32.2']);
  });

  it('feedback: a source, people and records written through one replica are read through the other', async () => {
    const org = await createTestOrg(pool);
    const as = { 'X-Service-Api-Key': org.apiKey };
    const source = await request(`${replica()}/v3/rest/feedback-sources`, {
      method: 'POST',
      headers: as,
      json: { name: 'Support', type: 'api' },
    });
    assert.equal(source.status, 201, JSON.stringify(source.body));
    const records = [];
    for (let i = 0; i < 10; i++) {
      const res = await request(`${replica()}/v3/rest/feedback-sources/${source.body.id}/records`, {
        method: 'POST',
        headers: as,
        json: { external_id: `ticket-${i}`, fields: [{ category: 'content', type: 'string', name: 'body', value: `report ${i}` }] },
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      records.push(res.body);
    }
    for (const record of records) {
      const read = await request(`${replica()}/v3/rest/feedback-sources/${source.body.id}/records/${record.id}`, { headers: as });
      assert.deepEqual(read.body, record);
    }
  });

  it("the session drainer's shards are spread over both workers, and both drain a backlog (issue 34)", async () => {
    assert.equal(shards(), 4, "docker-compose.yml's AGENT_DRAIN_SHARDS");
    const workerProcs = procs.filter((p) => p.role === 'worker' && p.child.exitCode === null);
    const pids = workerProcs.map((p) => p.child.pid!);
    const spread = await eventually(shardHolders, (h) => pids.every((pid) => h.get(pid) === shards() / 2), 60_000);
    assert.deepEqual(
      pids.map((pid) => spread.get(pid)),
      [shards() / 2, shards() / 2],
      `each worker holds its share of the shards: ${JSON.stringify([...spread])}`,
    );
    const org = await createTestOrg(pool, { credits: 1_000_000 });
    const app = await createApplication(pool, { organizationId: org.organizationId, name: 'Backlog', agentKey: 'backlog' });
    const { secret } = await issueCredential(pool, app);
    const SESSIONS = 100;
    const EVENTS = 300;
    const before = await Promise.all(workerProcs.map(drainedBy));
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: SESSIONS }, (_, s) =>
        request(`${replica()}/v3/rest/agent-conversations/ingest`, {
          method: 'POST',
          headers: { 'X-Service-Agent-Key': secret },
          json: {
            agentKey: 'backlog',
            externalSessionId: `backlog-${s}`,
            events: Array.from({ length: EVENTS }, (_, i) =>
              i % 2 ? assistantMessage(i + 1, `an answer (${i})`) : userMessage(i + 1, `a question (${i})`),
            ),
          },
        }),
      ),
    );
    assert.deepEqual([...new Set(answers.map((a) => a.status))], [202]);
    const processed = () =>
      pool.oneFirst(sql.type(z.object({ n: z.number() }))`
        SELECT count(*)::int AS n FROM agent_events e JOIN agent_sessions s ON s.id = e.session_id
        WHERE s.application_id = ${app.id} AND ${processedEvent}`);
    const total = SESSIONS * EVENTS;
    assert.equal(await eventually(processed, (n) => n === total, 5 * 60_000), total, 'the backlog is processed');
    const seconds = (performance.now() - started) / 1000;
    const after = await Promise.all(workerProcs.map(drainedBy));
    const shares = after.map((n, i) => (n - before[i]!) / total);
    for (const [i, share] of shares.entries())
      assert.ok(share >= 0.3, `${workerProcs[i]!.name} drained ${(100 * share).toFixed(1)}% of the events`);
    process.stdout.write(
      `      drain: ${total} events in ${seconds.toFixed(1)} s (${Math.round(total / seconds)} events/s, ingest included); shares ${shares.map((s) => `${(100 * s).toFixed(1)}%`).join(' and ')}\n`,
    );
  });

  it('agent sessions: ingests through both replicas are processed, metered and analysed once each, with a worker killed by SIGKILL mid-work', async () => {
    const org = await createTestOrg(pool, { credits: 1_000_000 });
    const app = await createApplication(pool, { organizationId: org.organizationId, name: 'Fleet', agentKey: 'fleet' });
    const { secret } = await issueCredential(pool, app);
    const SESSIONS = 100;
    const TURNS = 100;
    const ingest = (s: number, events: unknown[], status?: string) =>
      request(`${replica()}/v3/rest/agent-conversations/ingest`, {
        method: 'POST',
        headers: { 'X-Service-Agent-Key': secret },
        json: { agentKey: 'fleet', externalSessionId: `fleet-${s}`, events, ...(status ? { status } : {}) },
      });
    // Each session: TURNS turns (question, final answer, rated feedback), sent in 4 requests, the last ending it.
    const turns = (from: number, to: number) =>
      Array.from({ length: to - from }, (_, k) => {
        const t = from + k;
        return [
          userMessage(3 * t + 1, `the CSV export drops a column (${t})`),
          assistantMessage(3 * t + 2, `a fix for ${t}`),
          feedbackEvent(3 * t + 3, `e${3 * t + 2}`, t % 2 ? 'positive' : 'negative'),
        ];
      }).flat();
    const quarter = TURNS / 4;
    for (let q = 0; q < 4; q++) {
      const answers = await Promise.all(
        Array.from({ length: SESSIONS }, (_, s) => ingest(s, turns(q * quarter, (q + 1) * quarter), q === 3 ? 'ended' : undefined)),
      );
      assert.deepEqual([...new Set(answers.map((a) => a.status))], [202], JSON.stringify(answers.find((a) => a.status !== 202)?.body));
    }
    // Kill the worker whose drainer is working, in the middle of it: events processed, analyses under way.
    const progress = () =>
      pool.one(sql.type(z.object({ processed: z.number(), analysed: z.number() }))`
      SELECT (SELECT count(*)::int FROM agent_events e JOIN agent_sessions s ON s.id = e.session_id
                WHERE s.application_id = ${app.id} AND ${processedEvent}) AS processed,
             (SELECT count(*)::int FROM agent_analysis_jobs j JOIN agent_sessions s ON s.id = j.session_id
                WHERE s.application_id = ${app.id} AND j.status = 'done') AS analysed`);
    const total = SESSIONS * TURNS * 3;
    assert.ok(await waitFor(async () => (await progress()).analysed > 0, 120_000, 20), 'processing started');
    const drainerPid = await drainingWorkerPid();
    const before = await progress();
    const victim = await replaceWorker(drainerPid);
    assert.ok(before.analysed < SESSIONS * TURNS, `the kill came mid-work: ${JSON.stringify(before)}`);
    // The survivor finishes everything.
    const done = await waitFor(
      async () => {
        const p = await progress();
        return p.processed === total && p.analysed === SESSIONS * TURNS;
      },
      10 * 60_000,
      500,
    );
    assert.ok(done, `not finished: ${JSON.stringify(await progress())}`);
    const counts = await pool.one(sql.type(
      z.object({
        units: z.number(),
        distinctUnits: z.number(),
        explicit: z.number(),
        debits: z.number(),
        credits: z.number(),
        finished: z.number(),
      }),
    )`
      SELECT (SELECT count(*)::int FROM usage_records WHERE application_id = ${app.id}) AS units,
        (SELECT count(DISTINCT event_id)::int FROM usage_records WHERE application_id = ${app.id}) AS "distinctUnits",
        (SELECT count(*)::int FROM agent_signals g JOIN agent_sessions s ON s.id = g.session_id
           WHERE s.application_id = ${app.id} AND g.source = 'explicit_feedback') AS explicit,
        (SELECT count(*)::int FROM credit_transactions WHERE organization_id = ${org.organizationId} AND amount < 0) AS debits,
        (SELECT credit_balance::int FROM organizations WHERE id = ${org.organizationId}) AS credits,
        (SELECT count(*)::int FROM agent_sessions WHERE application_id = ${app.id} AND processed_through_sequence = ${3 * TURNS}) AS finished`);
    assert.deepEqual(counts, {
      units: SESSIONS * TURNS,
      distinctUnits: SESSIONS * TURNS,
      explicit: SESSIONS * TURNS,
      debits: SESSIONS * TURNS,
      credits: 1_000_000 - SESSIONS * TURNS,
      finished: SESSIONS,
    });
    // Report for the closing note: what was lost or counted twice (nothing).
    process.stdout.write(
      `      fleet: ${SESSIONS} sessions, ${total} events, ${SESSIONS * TURNS} analyses; killed ${victim} (the drainer's) at ${JSON.stringify(before)}; lost 0, duplicated 0\n`,
    );
  });
  it('media: an upload whose chunks alternate between the replicas, its worker killed by SIGKILL mid-encode, is ready once, and plays from the bucket', async () => {
    const org = await createTestOrg(pool);
    const as = { 'X-Service-Api-Key': org.apiKey };
    // 20 minutes of audio as WAV (38 MB): long enough to encode that the kill lands mid-encode.
    const wav = path.join(dir, 'long.wav');
    await writeTone(wav, { seconds: 1200, outputArgs: ['-ar', '16000', '-ac', '1'] });
    const data = await readFile(wav);
    const recording = await request(`${replica()}/v3/rest/recordings`, {
      method: 'POST',
      headers: as,
      json: { record: { externalId: 'fleet-upload' } },
    });
    assert.equal(recording.status, 201, JSON.stringify(recording.body));
    const recordingId = recording.body.id as string;
    const created = await request(`${replica()}/v3/rest/recordings/${recordingId}/uploads`, {
      method: 'POST',
      headers: as,
      json: { fileName: 'long.wav', fileSize: data.length },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const uploadUrl = created.body.uploadUrl as string;
    const CHUNK = 6 << 20;
    const used = new Set<string>();
    for (let offset = 0; offset < data.length; offset += CHUNK) {
      const base = replica();
      used.add(base);
      const res = await fetch(uploadUrl.replace(/^http:\/\/[^/]+/, base), {
        method: 'PATCH',
        body: data.subarray(offset, offset + CHUNK),
        headers: { 'Tus-Resumable': '1.0.0', 'Upload-Offset': String(offset), 'Content-Type': 'application/offset+octet-stream' },
      });
      assert.equal(res.status, 204, `chunk at ${offset} through ${base}: ${res.status} ${await res.text()}`);
    }
    assert.equal(used.size, 2, 'the chunks went to both replicas');
    const workflowId = mediaIngestionWorkflowId(recordingId);
    const encoder = await activityWorkerPid(workflowId, 'encodeMedia');
    const phase = () =>
      pool.one(sql.type(z.object({ phase: z.string(), progress: z.number().nullable() }))`
      SELECT phase, encode_progress AS progress FROM media_ingestions WHERE recording_id = ${recordingId}`);
    // Well into it: the encode has reported progress.
    assert.ok(await waitFor(async () => ((await phase()).progress ?? 0) > 0, 60_000, 50), 'the encode reports progress');
    const atKill = await phase();
    const victim = await replaceWorker(encoder);
    assert.equal(atKill.phase, 'encoding', 'the kill came mid-encode');
    assert.deepEqual(await resultOf(workflowId), { phase: 'ready', errorCode: null });
    const objects = (
      (await s3.client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: `media/renditions/${recordingId}/` }))).Contents ?? []
    ).map((o) => o.Key);
    assert.equal(objects.length, 1, `one rendition: ${objects.join(', ')}`);
    const asset = (await request(`${replica()}/v3/rest/recordings/${recordingId}`, { headers: as })).body.asset;
    assert.equal(asset.status, 'completed');
    const redirect = await fetch(asset.url as string, { redirect: 'manual' });
    assert.equal(redirect.status, 302);
    const part = await fetch(redirect.headers.get('location')!, { headers: { range: 'bytes=0-99' } });
    assert.equal(part.status, 206);
    process.stdout.write(
      `      fleet: a ${data.length}-byte upload in ${Math.ceil(data.length / CHUNK)} chunks over 2 replicas; killed ${victim} mid-encode (at ${atKill.progress ?? 0}%); ready, 1 rendition\n`,
    );
  });
  it('URL media: created through one replica, fetched by a worker through the SSRF-safe fetcher, stored in the bucket, ready and playable', async () => {
    const org = await createTestOrg(pool);
    const tone = path.join(dir, 'tone.wav');
    await writeTone(tone, { frequency: 330, seconds: 5 });
    const bytes = await readFile(tone);
    const server = createServer((req, res) => {
      if (req.url === '/tone.wav')
        return void res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': bytes.length }).end(bytes);
      res.writeHead(404).end();
    });
    // Both address families: `localhost` may resolve to ::1 first.
    server.listen(0, '::');
    await once(server, 'listening');
    try {
      const port = (server.address() as { port: number }).port;
      const created = await request(`${replica()}/v3/rest/recordings`, {
        method: 'POST',
        headers: { 'X-Service-Api-Key': org.apiKey },
        json: { record: { externalId: 'fleet-url' }, assetUrl: `http://localhost:${port}/tone.wav` },
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const recordingId = created.body.id as string;
      assert.deepEqual(await resultOf(mediaIngestionWorkflowId(recordingId)), { phase: 'ready', errorCode: null });
      const objects = ((await s3.client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: 'media/' }))).Contents ?? []).map(
        (o) => o.Key ?? '',
      );
      assert.ok(
        objects.some((k) => k.startsWith(`media/renditions/${recordingId}/`)),
        objects.join(', '),
      );
      assert.ok(!objects.some((k) => k.startsWith('media/incoming/')), 'the download is deleted once encoded');
      const asset = (await request(`${replica()}/v3/rest/recordings/${recordingId}`, { headers: { 'X-Service-Api-Key': org.apiKey } })).body
        .asset;
      const redirect = await fetch(asset.url as string, { redirect: 'manual' });
      assert.equal(redirect.status, 302);
      assert.equal((await fetch(redirect.headers.get('location')!, { headers: { range: 'bytes=0-9' } })).status, 206);
    } finally {
      server.close();
    }
  });

  it('a meeting join with the local recorder: its recording goes through the bucket and plays', async () => {
    const org = await createTestOrg(pool, { recordingAllowed: true });
    const user = await createTestUser(pool, org.organizationId);
    const res = await request(`${replica()}/v3/rest/recordings/meeting-joins`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${user.accessToken}` },
      json: { type: 'meetingUrl', joinUrl: 'https://meet.google.com/abc-defg-hij' },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const recordingId = res.body.recordingId as string;
    assert.deepEqual(await resultOf(meetingJoinIdFor(TEST_SIGNING_SECRET, org.organizationId, 'google_meet:abc-defg-hij')), {
      state: 'done',
      reason: null,
    });
    assert.deepEqual(await resultOf(mediaIngestionWorkflowId(recordingId)), { phase: 'ready', errorCode: null });
    const asset = (await request(`${replica()}/v3/rest/recordings/${recordingId}`, { headers: { 'X-Service-Api-Key': org.apiKey } })).body
      .asset;
    assert.equal(asset.status, 'completed');
    const redirect = await fetch(asset.url as string, { redirect: 'manual' });
    assert.equal(redirect.status, 302);
    assert.equal((await fetch(redirect.headers.get('location')!, { headers: { range: 'bytes=0-9' } })).status, 206);
  });

  it('MCP: a coding-agent session uploaded through one replica is associated and listed through the other', async () => {
    // An OAuth access token, as MCP clients get one, from api-a (PUBLIC_BASE_URL: the issuer); both replicas take it.
    const accessToken = await mcpAccessToken(apis[0]!, await createSignInUser(pool));
    const connect = async (base: string) => {
      const c = new McpClient({ name: 'fleet-test', version: '1.0.0' });
      await c.connect(
        new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${accessToken}` } } }),
      );
      return c;
    };
    const call = async (c: McpClient, name: string, args: Record<string, unknown>) => {
      const r = (await c.callTool({ name, arguments: args })) as CallToolResult;
      assert.ok(!r.isError, JSON.stringify(r.content));
      return r.structuredContent as Record<string, any>;
    };
    const [a, b] = [await connect(apis[0]!), await connect(apis[1]!)];
    try {
      const project = await call(a, 'create-project', { name: 'Fleet', description: 'two replicas' });
      const content = await readFile(path.join(PROJECT_ROOT, 'test', 'fixtures', 'coding-sessions', 'claude-code.jsonl'), 'utf8');
      const session = await call(a, 'upload-agent-session', { content });
      await call(b, 'associate-agent-session', { resourceType: 'project', resourceId: project.publicId, sessionId: session.sessionId });
      const listed = await call(b, 'list-associated-agent-sessions', { resourceType: 'project', resourceId: project.publicId });
      assert.deepEqual(JSON.stringify(listed).includes(session.sessionId as string), true, JSON.stringify(listed));
      assert.equal((await call(a, 'get-project', { publicId: project.publicId })).associatedSessionCount, 1);
    } finally {
      await a.close();
      await b.close();
    }
  });
  it("PgBouncer in transaction mode carries every process's pool; LISTEN and the upload locks go straight to PostgreSQL", async () => {
    // PgBouncer's admin console (the `pgbouncer` database; simple queries only), as the compose file's stats user.
    const admin = new pg.Client({ connectionString: `postgres://intake:intake@${fleet.pgbouncer.address}/pgbouncer` });
    await admin.connect();
    try {
      const show = async <T>(what: string) => (await admin.query(`SHOW ${what}`)).rows as T[];
      const [stats] = (await show<{ database: string; total_xact_count: string }>('STATS')).filter((r) => r.database === 'intake');
      // Everything the tests above did went through it: thousands of transactions.
      assert.ok(Number(stats?.total_xact_count) > 1000, JSON.stringify(stats));
      const [pools] = (
        await show<{ database: string; pool_mode: string; sv_active: string; sv_idle: string; sv_used: string }>('POOLS')
      ).filter((r) => r.database === 'intake');
      assert.equal(pools?.pool_mode, 'transaction');
      const clients = (await show<{ database: string; application_name: string }>('CLIENTS')).filter((r) => r.database === 'intake');
      const live = procs.filter(isRunning).length;
      // Each live process holds pool connections through it; none of them listens.
      assert.ok(clients.length >= live, `${clients.length} clients for ${live} processes`);
      assert.deepEqual(
        clients.filter((c) => c.application_name.startsWith('intake listen')),
        [],
        'no LISTEN connection goes through the pooler',
      );
      // PostgreSQL sees at most the pooler's server connections for the pools, whatever the replicas' pool sizes.
      const servers = Number(pools.sv_active) + Number(pools.sv_idle) + Number(pools.sv_used);
      assert.ok(servers <= 25, `${servers} server connections (default_pool_size 20, reserve 5)`);
      console.log(
        `      pgbouncer: ${stats!.total_xact_count} transactions; ${clients.length} client connections over ${servers} server connections`,
      );
    } finally {
      await admin.end();
    }
    // The listeners (drain wake-ups, webhook wake-ups: two per worker) are sessions of PostgreSQL itself.
    const listeners = await pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = 'intake' AND application_name LIKE 'intake listen %'`);
    const workers = procs.filter((p) => p.role === 'worker' && isRunning(p)).length;
    assert.ok(listeners >= 2 * workers, `${listeners} listening sessions for ${workers} workers`);
  });
});
