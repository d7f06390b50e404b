import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import { chown, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import pg from 'pg';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { createDatabasePool } from '../../src/db/pool.js';
import { freePort } from '../../src/dev/net.js';
import { startLocalPostgres, type LocalPostgres } from '../../src/dev/postgres.js';
import { packageVersion, PROJECT_ROOT } from '../../src/paths.js';
import { assistantMessage, feedbackEvent, userMessage } from '../../harness/agents.js';
import { TEST_OPERATOR_TOKEN, TEST_SIGNING_SECRET, testConfig } from '../../harness/config.js';
import { httpStatus, waitFor } from '../../harness/wait.js';
import { isMp4, writeClip } from '../../harness/media.js';
import { ACCEPTED_DECODERS, ACCEPTED_FORMATS } from '../../src/media/ffmpeg.js';
import { startTestS3, TEST_S3_CREDENTIALS, type TestS3 } from '../../harness/s3.js';
import { composeEnvironments, onThisMachine } from '../../harness/compose-env.js';
import { startTemporalCluster, type TemporalCluster } from '../../harness/temporal-cluster.js';
import { pgbouncerIniHere } from '../../harness/pgbouncer.js';

const run = promisify(execFile);
const podman = (args: string[], o: { timeout?: number } = {}) =>
  run('podman', args, { maxBuffer: 1 << 26, timeout: o.timeout ?? 120_000 }).then((r) => r.stdout.trim());

/**
 * The release image, built and run (issue 33, point 1): `deploy/image/build` builds it with podman
 * (base images made from Debian's packages where no registry is reachable), then the API and the
 * worker run as containers from it, read-only, as uid 1000, against PostgreSQL, the production
 * Temporal server and an S3 bucket on this machine's loopback, with docker-compose.yml's
 * environment. `npm run test:image`; in `.ci/run`. INTAKE_IMAGE names an image already built.
 */
describe('the image', function () {
  this.timeout(30 * 60_000);
  let image: string;
  let dir: string;
  let postgres: LocalPostgres;
  let cluster: TemporalCluster;
  let s3: TestS3;
  let pool: DatabasePool;
  let envFile: string;
  let api: string;
  const containers: string[] = [];
  /** PgBouncer's container (docker-compose.yml's pgbouncer service). */
  let pgbouncerId: string;
  let pgbouncerPort: number;
  const suffix = `${process.pid}`;

  /** A detached container from the image: host network, read-only root, the data volume, the compose environment. */
  const start = async (name: string, command: string[], extra: Record<string, string>) => {
    const data = path.join(dir, `${name}-data`);
    await mkdir(data, { recursive: true });
    // The image's user owns its one writable path, as a volume would be.
    await chown(data, 1000, 1000);
    const id = `intake-${name}-${suffix}`;
    await podman([
      'run',
      '--detach',
      '--name',
      id,
      '--network',
      'host',
      '--read-only',
      '--tmpfs',
      '/tmp',
      '--volume',
      `${data}:/var/lib/intake`,
      '--env-file',
      envFile,
      ...Object.entries(extra).flatMap(([k, v]) => ['--env', `${k}=${v}`]),
      image,
      ...command,
    ]);
    containers.push(id);
    return id;
  };
  /** Runs the image's CLI in a container of its own (`--rm`), as an operator would; its JSON answer. */
  const cli = async (...args: string[]) =>
    JSON.parse(
      await podman([
        'run',
        '--rm',
        '--network',
        'host',
        '--read-only',
        '--env-file',
        envFile,
        image,
        'node',
        'dist/src/cli/main.js',
        ...args,
      ]),
    ) as Record<string, unknown>;
  const logsOf = (id: string) => podman(['logs', id]).catch(() => '');

  before(async () => {
    image =
      process.env.INTAKE_IMAGE ??
      (await run(path.join(PROJECT_ROOT, 'deploy', 'image', 'build'), [], { maxBuffer: 1 << 26, timeout: 25 * 60_000 })).stdout
        .trim()
        .split('\n')
        .at(-1)!;
    dir = await mkdtemp(path.join(os.tmpdir(), 'intake-image-'));
    postgres = await startLocalPostgres({ dataDir: path.join(dir, 'pg'), port: await freePort(), persistent: false, fast: false });
    await postgres.createDatabase('intake');
    s3 = await startTestS3('intake');
    const port = await freePort();
    const compose = await composeEnvironments(['api', 'worker', 'temporal'], {
      SIGNING_SECRET: TEST_SIGNING_SECRET,
      OPERATOR_TOKEN: TEST_OPERATOR_TOKEN,
      S3_SECRET_ACCESS_KEY: TEST_S3_CREDENTIALS.secretAccessKey,
      GRAFANA_ADMIN_PASSWORD: 'test-grafana-password',
      TEMPORAL_PAYLOAD_KEYS: `${testConfig().temporal.payloadKeys![0]!.id}:${Buffer.from(testConfig().temporal.payloadKeys![0]!.key).toString('base64')}`,
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    });
    cluster = await startTemporalCluster({
      postgresUrl: postgres.url('postgres'),
      dir: path.join(dir, 'temporal'),
      historyShards: Number(compose.temporal.NUM_HISTORY_SHARDS),
    });
    // The compose file's database role.
    const admin = new pg.Client({ connectionString: postgres.url('postgres') });
    await admin.connect();
    await admin.query("CREATE ROLE intake LOGIN SUPERUSER PASSWORD 'intake'");
    await admin.end();
    // The compose file's pgbouncer service: its image (Debian 13's package, deploy/pgbouncer), its
    // file with this machine's addresses, the password from the environment as compose gives it.
    await podman(
      ['build', '--pull=never', '--quiet', '--tag', `intake-pgbouncer:test-${suffix}`, path.join(PROJECT_ROOT, 'deploy', 'pgbouncer')],
      {
        timeout: 10 * 60_000,
      },
    );
    pgbouncerPort = await freePort();
    await writeFile(
      path.join(dir, 'pgbouncer.ini'),
      await pgbouncerIniHere({ postgres: new URL(postgres.url('intake')).host, port: pgbouncerPort }),
    );
    pgbouncerId = `intake-pgbouncer-${suffix}`;
    await podman([
      'run',
      '--detach',
      '--name',
      pgbouncerId,
      '--network',
      'host',
      '--env',
      'POSTGRES_PASSWORD=intake',
      '--volume',
      `${path.join(dir, 'pgbouncer.ini')}:/etc/pgbouncer/pgbouncer.ini:ro`,
      `intake-pgbouncer:test-${suffix}`,
    ]);
    // The compose file's healthcheck.
    assert.ok(
      await waitFor(
        () =>
          podman(['exec', pgbouncerId, 'bash', '-c', `exec 3<>/dev/tcp/127.0.0.1/${pgbouncerPort}`]).then(
            () => true,
            () => false,
          ),
        30_000,
      ),
      `PgBouncer does not listen:\n${await logsOf(pgbouncerId)}`,
    );
    const env = {
      ...onThisMachine(compose.api, {
        'postgres:5432': new URL(postgres.url('intake')).host,
        'pgbouncer:6432': `127.0.0.1:${pgbouncerPort}`,
        'temporal:7233': cluster.address,
        'seaweedfs:8333': new URL(s3.endpoint).host,
      }),
      S3_ACCESS_KEY_ID: TEST_S3_CREDENTIALS.accessKeyId,
      MEDIA_HEARTBEAT_TIMEOUT_SECONDS: '5',
    };
    envFile = path.join(dir, 'intake.env');
    await writeFile(
      envFile,
      Object.entries(env)
        .map(([k, v]) => `${k}=${v}`)
        .join('\n'),
    );
    const apiId = await start('api', ['node', 'dist/src/main/api.js'], { PORT: String(port), HOST: '127.0.0.1', METRICS_PORT: 'off' });
    api = `http://127.0.0.1:${port}`;
    assert.ok(
      await waitFor(async () => (await httpStatus(`${api}/readyz`)) === 200, 120_000),
      `the API is not ready:\n${await logsOf(apiId)}`,
    );
    const workerPort = await freePort();
    const workerId = await start('worker', ['node', 'dist/src/main/worker.js'], {
      METRICS_HOST: '127.0.0.1',
      METRICS_PORT: String(workerPort),
    });
    assert.ok(
      await waitFor(async () => (await httpStatus(`http://127.0.0.1:${workerPort}/healthz`)) === 200, 120_000),
      `the worker is not healthy:\n${await logsOf(workerId)}`,
    );
    pool = await createDatabasePool(postgres.url('intake'));
  });

  after(async () => {
    for (const id of [...containers, pgbouncerId]) if (id) await podman(['rm', '--force', id]).catch(() => undefined);
    await podman(['rmi', '--force', `intake-pgbouncer:test-${suffix}`]).catch(() => undefined);
    await pool?.end();
    await cluster?.stop();
    await s3?.stop();
    await postgres?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('runs as uid 1000 on a read-only root, with its version, migrations applied by the API container, and intake doctor inside', async () => {
    const [apiId] = containers;
    assert.equal(await podman(['exec', apiId!, 'id', '-u']), '1000');
    await assert.rejects(podman(['exec', apiId!, 'touch', '/app/written']), /Read-only file system/);
    const health = (await (await fetch(`${api}/healthz`)).json()) as { version: string };
    assert.equal(health.version, packageVersion());
    assert.equal(
      await podman(['image', 'inspect', image, '--format', '{{ index .Labels "org.opencontainers.image.version" }}']),
      packageVersion(),
    );
    const migrations = await pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM schema_migrations`);
    assert.ok(migrations >= 31, `${migrations} migrations`);
    const doctor = await cli('doctor');
    const ffmpeg = (doctor.worker as { ffmpeg: { version: string; ffmpeg: string; sandbox?: string } }).ffmpeg;
    assert.deepEqual([doctor.ok, ffmpeg.ffmpeg], [true, '/usr/local/bin/ffmpeg']);
    // Built from Debian 13's source package of FFmpeg 7.1 (the Dockerfile's ffmpeg stage).
    assert.match(ffmpeg.version, /^ffmpeg version 7\.1\.\d+-intake/);
    assert.equal((doctor.temporal as { historyShardCount: number }).historyShardCount, 512);
    // The web console, built in the image's build stage, served by the API container.
    const console = await fetch(`${api}/console/sessions`);
    assert.equal(console.status, 200);
    const page = await console.text();
    assert.match(page, /<title>Intake console<\/title>/);
    const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(page)?.[1];
    assert.ok(script, page);
    assert.equal(await httpStatus(`${api}${script}`), 200);
  });

  it('the CLI in a container creates an organization and a key; an agent ingest through the API container is processed by the worker container', async () => {
    const org = (await cli('org', 'create', '--name', 'Image', '--credits', '10')).organizationId as string;
    const key = (await cli('api-key', 'create', '--org', org)).apiKey as string;
    const app = await cli('agent-app', 'create', '--org', org, '--name', 'Image bot', '--agent-key', 'image-bot');
    const secret = (await cli('agent-app', 'secret', '--app', app.applicationId as string)).secret as string;
    const res = await fetch(`${api}/v3/rest/agent-conversations/ingest`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-Service-Agent-Key': secret },
      body: JSON.stringify({
        agentKey: 'image-bot',
        externalSessionId: 'image-1',
        status: 'ended',
        events: [userMessage(1, 'The export is slow'), assistantMessage(2, 'Looking'), feedbackEvent(3, 'e2', 'negative')],
      }),
    });
    const body = (await res.json()) as { sessionId: string };
    assert.equal(res.status, 202, JSON.stringify(body));
    const processed = () =>
      pool.maybeOneFirst(sql.type(z.object({ watermark: z.number().nullable() }))`
        SELECT processed_through_sequence AS watermark FROM agent_sessions WHERE id = ${body.sessionId}`);
    assert.ok(await waitFor(async () => (await processed()) === 3, 120_000), 'the worker container processed the session');
    const signals = await fetch(`${api}/v3/rest/signals?sessionId=${body.sessionId}`, { headers: { 'X-Service-Api-Key': key } });
    const listed = (await signals.json()) as { signals?: { source: string }[] };
    assert.equal(signals.status, 200, JSON.stringify(listed));
    assert.ok(
      listed.signals?.some((s) => s.source === 'explicit_feedback'),
      JSON.stringify(listed),
    );
  });

  /** A tus upload of `data` through the API container, encoded by the worker container into the bucket; the rendition's first bytes. */
  const uploadAndPlay = async (name: string, data: Buffer) => {
    const org = (await cli('org', 'create', '--name', `Image media ${name}`)).organizationId as string;
    const key = (await cli('api-key', 'create', '--org', org)).apiKey as string;
    const as = { 'X-Service-Api-Key': key, 'content-type': 'application/json' };
    const made = await fetch(`${api}/v3/rest/recordings`, {
      method: 'POST',
      headers: as,
      body: JSON.stringify({ record: { externalId: `image-upload-${name}` } }),
    });
    const recording = (await made.json()) as { id: string };
    assert.equal(made.status, 201, JSON.stringify(recording));
    const created = await fetch(`${api}/v3/rest/recordings/${recording.id}/uploads`, {
      method: 'POST',
      headers: as,
      body: JSON.stringify({ fileName: name, fileSize: data.length }),
    });
    const { uploadUrl, ...rest } = (await created.json()) as { uploadUrl: string };
    assert.equal(created.status, 201, JSON.stringify(rest));
    const patched = await fetch(uploadUrl, {
      method: 'PATCH',
      body: data,
      headers: { 'Tus-Resumable': '1.0.0', 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream' },
    });
    assert.equal(patched.status, 204, await patched.text());
    const asset = async () =>
      (
        (await (await fetch(`${api}/v3/rest/recordings/${recording.id}`, { headers: as })).json()) as {
          asset: { status: string; url?: string };
        }
      ).asset;
    assert.ok(await waitFor(async () => (await asset()).status === 'completed', 180_000), `the asset: ${JSON.stringify(await asset())}`);
    const objects =
      (await s3.client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: `media/renditions/${recording.id}/` }))).Contents ?? [];
    assert.equal(objects.length, 1, 'one rendition in the bucket');
    const redirect = await fetch((await asset()).url!, { redirect: 'manual' });
    assert.equal(redirect.status, 302);
    const part = await fetch(redirect.headers.get('location')!, { headers: { range: 'bytes=0-99' } });
    assert.equal(part.status, 206);
    const head = Buffer.from(await part.arrayBuffer());
    assert.equal(head.byteLength, 100);
    return { key: objects[0]!.Key!, head };
  };

  it('a tus upload of real speech (FLAC) is encoded by the container’s FFmpeg to AAC into the bucket and plays', async () => {
    // A LibriVox recording, encoded to the AAC rendition (M4A).
    const { key, head } = await uploadAndPlay(
      'speech.flac',
      await readFile(path.join(PROJECT_ROOT, 'samples', 'librivox-sense-and-sensibility-0870.flac')),
    );
    assert.match(key, /\.m4a$/);
    assert.ok(isMp4(head));
  });

  it('a video upload (VP9 and Opus in WebM) is encoded by the container’s FFmpeg to H.264 and AAC (MP4) and plays', async () => {
    const file = path.join(dir, 'clip.webm');
    await writeClip(file, { seconds: 2, size: '320x240', rate: 15, codecArgs: ['-c:v', 'libvpx-vp9', '-b:v', '200k', '-c:a', 'libopus'] });
    const { key, head } = await uploadAndPlay('clip.webm', await readFile(file));
    assert.match(key, /\.mp4$/);
    assert.ok(isMp4(head));
  });

  it("the container's FFmpeg has every component Intake's media code names, and nothing links outside the image", async () => {
    const list = async (what: string) =>
      podman(['run', '--rm', '--entrypoint', '/usr/local/bin/ffmpeg', image, '-hide_banner', `-${what}`]);
    /** The component names of an `ffmpeg -decoders`-style listing (after its legend, the second column; demuxers' comma-joined aliases split). */
    const names = (text: string) =>
      new Set(
        text
          .split('\n')
          .slice(text.split('\n').findIndex((l) => /^\s*-+\s*$/.test(l)) + 1)
          .flatMap((l) => (l.trim().split(/\s+/)[1] ?? '').split(',')),
      );
    const missing = (have: Set<string>, want: readonly string[]) => want.filter((n) => !have.has(n));
    assert.deepEqual(missing(names(await list('demuxers')), ACCEPTED_FORMATS), [], 'demuxers');
    assert.deepEqual(missing(names(await list('decoders')), ACCEPTED_DECODERS), [], 'decoders');
    assert.deepEqual(missing(names(await list('encoders')), ['aac', 'libx264', 'libmp3lame', 'pcm_s16le']), [], 'encoders');
    assert.deepEqual(missing(names(await list('muxers')), ['mp4', 'mp3', 'wav', 's16le']), [], 'muxers');
    assert.deepEqual(
      missing(names(await list('filters')), ['scale', 'aresample', 'aformat', 'format', 'sine', 'transpose']),
      [],
      'filters',
    );
    assert.deepEqual(missing(names(await list('devices')), ['lavfi']), [], 'input devices');
    const ldd = await podman(['run', '--rm', '--entrypoint', 'ldd', image, '/usr/local/bin/ffmpeg', '/usr/local/bin/ffprobe']);
    assert.doesNotMatch(ldd, /not found/);
  });

  it("PgBouncer's image (Debian 13's package, as compose runs it) carries the containers' pools in transaction mode", async () => {
    assert.equal(await podman(['exec', pgbouncerId, 'id', '-un']), 'postgres');
    const version = /PgBouncer (\d+)\.(\d+)/.exec(await podman(['exec', pgbouncerId, 'pgbouncer', '--version']));
    assert.ok(
      version && (Number(version[1]) > 1 || Number(version[2]) >= 21),
      `PgBouncer ${version?.[0]}: 1.21 or later keeps named prepared statements`,
    );
    const admin = new pg.Client({ connectionString: `postgres://intake:intake@127.0.0.1:${pgbouncerPort}/pgbouncer` });
    await admin.connect();
    try {
      const pools = (await admin.query('SHOW POOLS')).rows.filter((r) => r.database === 'intake');
      assert.equal(pools[0]?.pool_mode, 'transaction');
      const stats = (await admin.query('SHOW STATS')).rows.find((r) => r.database === 'intake');
      // The tests above (migrations aside, which go straight to PostgreSQL) went through it.
      assert.ok(Number(stats?.total_xact_count) > 10, JSON.stringify(stats));
    } finally {
      await admin.end();
    }
    // A wrong password is refused (SCRAM against the auth file the entrypoint wrote).
    const wrong = new pg.Client({ connectionString: `postgres://intake:wrong@127.0.0.1:${pgbouncerPort}/intake` });
    await assert.rejects(wrong.connect(), /SASL authentication failed|password authentication failed/);
  });

  it('SIGTERM stops the API and the worker containers with exit code 0', async () => {
    for (const id of containers) {
      await podman(['stop', '--time', '60', id], { timeout: 90_000 });
      const code = await podman(['inspect', id, '--format', '{{.State.ExitCode}}']);
      assert.equal(code, '0', `${id} exited with ${code}:\n${(await logsOf(id)).slice(-3000)}`);
    }
  });
});
