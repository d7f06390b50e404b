import { strict as assert } from 'node:assert';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { DatabasePool } from 'slonik';
import { createDatabasePool } from '../../../src/db/pool.js';
import { uploadsDirectory } from '../../../src/media/upload-store.js';
import { TEST_SIGNING_SECRET } from '../../../harness/config.js';
import { createTestOrg, type TestOrg } from '../../../harness/fixtures.js';
import { createTestDatabase, testStack } from '../../../harness/stack.js';
import { startApiProcess, type ApiProcess } from '../../../harness/api-process.js';
import { waitFor } from '../../../harness/wait.js';

/**
 * One direct upload through two API processes (`src/main/api.ts`) sharing its store: the tus lock
 * is PostgreSQL's (an advisory lock per upload), so a HEAD or PATCH on replica B while replica A
 * is receiving a PATCH stops A's request first (tus's release request, sent over NOTIFY), then
 * answers from what A stored. With one lock per process, B would answer while A still writes.
 */
describe('direct uploads across two API processes (a shared tus lock)', function () {
  this.timeout(120_000);
  let mediaDir: string;
  let pool: DatabasePool;
  let org: TestOrg;
  const replicas: ApiProcess[] = [];

  before(async () => {
    mediaDir = await mkdtemp(path.join(os.tmpdir(), 'intake-replicas-'));
    const databaseUrl = await createTestDatabase();
    pool = await createDatabasePool(databaseUrl);
    org = await createTestOrg(pool);
    const { temporal } = await testStack();
    const env = {
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: temporal.address,
      SIGNING_SECRET: TEST_SIGNING_SECRET,
      STORAGE_DIR: mediaDir,
      LOG_LEVEL: 'warn',
      TEMPORAL_TASK_QUEUE: `replicas-${randomUUID()}`,
    };
    for (let i = 0; i < 2; i++) replicas.push(await startApiProcess(env));
  });
  after(async () => {
    await Promise.all(replicas.map((replica) => replica.stop()));
    await pool?.end();
    await rm(mediaDir, { recursive: true, force: true });
  });

  const tus = { 'Tus-Resumable': '1.0.0' };
  const onReplica = (uploadUrl: string, replica: number) => uploadUrl.replace(/^http:\/\/[^/]+/, replicas[replica]!.url);
  const offsetOn = async (uploadUrl: string, replica: number) =>
    Number((await fetch(onReplica(uploadUrl, replica), { method: 'HEAD', headers: tus })).headers.get('upload-offset'));

  it('a HEAD on replica B while A receives a slow PATCH stops A first and answers what A stored; B then finishes the upload, byte for byte', async () => {
    const data = randomBytes(4 << 20);
    const headers = { 'X-Service-Api-Key': org.apiKey, 'Content-Type': 'application/json' };
    const recording = (await (
      await fetch(`${replicas[0]!.url}/v3/rest/recordings`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ record: { externalId: randomUUID() } }),
      })
    ).json()) as { id: string };
    const created = await fetch(`${replicas[0]!.url}/v3/rest/recordings/${recording.id}/uploads`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ fileName: 'call.wav', fileSize: data.length }),
    });
    assert.equal(created.status, 201);
    const { uploadUrl, uploadId } = (await created.json()) as { uploadUrl: string; uploadId: string };
    // A slow client on replica A: 64 KiB every 100 ms (6.4 s for the file). A release request gives
    // the holder tus's lockDrainTimeout (3 s) to stop, so most of the file is still to come then.
    let sent = 0;
    const slow = new ReadableStream<Uint8Array>({
      async pull(controller) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        if (sent >= data.length) return controller.close();
        controller.enqueue(data.subarray(sent, sent + (64 << 10)));
        sent += 64 << 10;
      },
    });
    const onA = fetch(onReplica(uploadUrl, 0), {
      method: 'PATCH',
      body: slow,
      duplex: 'half',
      headers: { ...tus, 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream' },
    }).then(
      async (res) => res.status,
      () => 'aborted',
    );
    const file = path.join(uploadsDirectory(mediaDir), uploadId);
    assert.ok(await waitFor(async () => ((await stat(file).catch(() => null))?.size ?? 0) > 256 << 10, 30_000, 20), 'A is writing');
    const answeredByB = await offsetOn(uploadUrl, 1);
    await onA;
    const stored = (await stat(file)).size;
    assert.ok(answeredByB > 0 && answeredByB < data.length, `B answered ${answeredByB}`);
    assert.equal(stored, answeredByB, 'nothing was written after B answered');
    assert.equal(await offsetOn(uploadUrl, 0), answeredByB, 'A agrees');
    // B finishes from there.
    const rest = await fetch(onReplica(uploadUrl, 1), {
      method: 'PATCH',
      body: data.subarray(answeredByB),
      headers: { ...tus, 'Upload-Offset': String(answeredByB), 'Content-Type': 'application/offset+octet-stream' },
    });
    assert.deepEqual([rest.status, rest.headers.get('upload-offset')], [204, String(data.length)]);
    assert.ok((await readFile(file)).equals(data), 'the stored file is the uploaded bytes');
  });
});
