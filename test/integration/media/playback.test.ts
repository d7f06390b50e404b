import { strict as assert } from 'node:assert';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createDatabasePool } from '../../../src/db/pool.js';
import { setRendition } from '../../../src/db/repositories/recordings.js';
import { PlaybackSigner } from '../../../src/media/playback.js';
import type { DatabasePool } from 'slonik';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { testConfig, TEST_SIGNING_SECRET } from '../../../harness/config.js';
import { createTestDatabase } from '../../../harness/stack.js';
import { createTestOrg, type TestOrg } from '../../../harness/fixtures.js';

/** Signed playback URLs: byte ranges, expiry, tampering, and nothing outside the renditions. */
describe('media playback by signed URL', function () {
  this.timeout(60_000);
  let dir: string;
  let pool: DatabasePool;
  let api: TestApi;
  const signer = new PlaybackSigner(TEST_SIGNING_SECRET, 3600);
  let org: TestOrg;
  let recordingId: string;
  const file = `${randomUUID()}.m4a`;
  const bytes = randomBytes(10_000);

  /** A recording whose published rendition is `name`, with its file on disk. */
  async function publishedRecording(name: string): Promise<string> {
    const created = await api.request('/v3/rest/recordings', {
      method: 'POST',
      headers: { 'X-Service-Api-Key': org.apiKey },
      json: { name: 'Call', record: { externalId: randomUUID() } },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.id as string;
    await mkdir(path.join(dir, 'renditions', id), { recursive: true });
    await writeFile(path.join(dir, 'renditions', id, name), bytes);
    await setRendition(pool, id, { file: name, contentType: 'audio/mp4', durationSec: 1 });
    return id;
  }

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'intake-media-'));
    await writeFile(path.join(dir, 'secret.txt'), 'not for playback');
    pool = await createDatabasePool(await createTestDatabase());
    api = await startTestApi({ pool, config: testConfig({ STORAGE_DIR: dir }) });
    org = await createTestOrg(pool);
    recordingId = await publishedRecording(file);
  });
  after(async () => {
    await api?.close();
    await pool?.end();
    await rm(dir, { recursive: true, force: true });
  });

  it('serves the rendition whole, with its type, ranges advertised and private caching', async () => {
    const { path: url } = signer.sign(recordingId, file);
    const res = await fetch(`${api.url}${url}`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'audio/mp4');
    assert.equal(res.headers.get('accept-ranges'), 'bytes');
    assert.match(res.headers.get('cache-control') ?? '', /^private, max-age=\d+$/);
    assert.ok(Buffer.from(await res.arrayBuffer()).equals(bytes));
  });

  it('serves byte ranges (206) and refuses impossible ones (416)', async () => {
    const { path: url } = signer.sign(recordingId, file);
    const part = await fetch(`${api.url}${url}`, { headers: { range: 'bytes=100-199' } });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), `bytes 100-199/${bytes.length}`);
    assert.ok(Buffer.from(await part.arrayBuffer()).equals(bytes.subarray(100, 200)));
    const tail = await fetch(`${api.url}${url}`, { headers: { range: 'bytes=-10' } });
    assert.equal(tail.status, 206);
    assert.ok(Buffer.from(await tail.arrayBuffer()).equals(bytes.subarray(-10)));
    const beyond = await api.request(url, { headers: { range: 'bytes=20000-20010' } });
    assert.equal(beyond.status, 416);
    assert.equal(beyond.body.errorCode, 'range_not_satisfiable');
  });

  it('refuses a tampered, foreign or expired URL with 403 and a reason', async () => {
    const { path: url } = signer.sign(recordingId, file);
    const tampered = await api.request(url.replace(/signature=.{4}/, 'signature=AAAA'));
    assert.deepEqual([tampered.status, tampered.body.errorCode], [403, 'playback_url_invalid']);
    assert.equal(typeof tampered.body.message, 'string');
    const foreign = await api.request(url.replace(recordingId, randomUUID()));
    assert.deepEqual([foreign.status, foreign.body.errorCode], [403, 'playback_url_invalid']);
    const longer = await api.request(url.replace(/expires=(\d+)/, (_m, e: string) => `expires=${Number(e) + 3600}`));
    assert.deepEqual([longer.status, longer.body.errorCode], [403, 'playback_url_invalid']);
    const old = signer.sign(recordingId, file, Date.now() - 2 * 3600 * 1000);
    const expired = await api.request(old.path);
    assert.deepEqual([expired.status, expired.body.errorCode], [403, 'playback_url_expired']);
    const bare = await api.request(`/v3/media/playback/${recordingId}/${file}`);
    assert.deepEqual([bare.status, bare.body.errorCode], [403, 'playback_url_invalid']);
  });

  it('reaches nothing but renditions: other names are invalid, a missing rendition is 404', async () => {
    for (const name of ['..%2Fsecret.txt', 'secret.txt', `${randomUUID()}.txt`]) {
      const res = await api.request(`/v3/media/playback/${recordingId}/${name}?expires=9999999999&signature=x`);
      assert.equal(res.status, 403, name);
    }
    const missing = signer.sign(recordingId, `${randomUUID()}.mp4`);
    const res = await api.request(missing.path);
    assert.deepEqual([res.status, res.body.errorCode], [404, 'not_found']);
  });

  it('serves nothing of a deleted recording from the 204 on, though its file is still there', async () => {
    const id = await publishedRecording(file);
    const { path: url } = signer.sign(id, file);
    assert.equal((await fetch(`${api.url}${url}`)).status, 200);
    const deleted = await api.request(`/v3/rest/recordings/${id}`, { method: 'DELETE', headers: { 'X-Service-Api-Key': org.apiKey } });
    assert.equal(deleted.status, 204);
    const after = await api.request(url);
    assert.deepEqual([after.status, after.body.errorCode], [404, 'not_found']);
    assert.equal(typeof after.body.message, 'string');
    const range = await api.request(url, { headers: { range: 'bytes=0-99' } });
    assert.deepEqual([range.status, range.body.errorCode], [404, 'not_found']);
  });

  it('serves only the published rendition: a replaced one is 404', async () => {
    const id = await publishedRecording(file);
    const old = signer.sign(id, file);
    const next = `${randomUUID()}.m4a`;
    await writeFile(path.join(dir, 'renditions', id, next), bytes);
    await setRendition(pool, id, { file: next, contentType: 'audio/mp4', durationSec: 1 });
    assert.equal((await api.request(old.path)).status, 404);
    assert.equal((await fetch(`${api.url}${signer.sign(id, next).path}`)).status, 200);
  });

  it('signs stably within a 5-minute step and never for less than the TTL', () => {
    const now = Date.parse('2026-11-23T12:00:01Z');
    const a = signer.sign(recordingId, file, now);
    const b = signer.sign(recordingId, file, now + 60_000);
    assert.equal(a.path, b.path);
    assert.ok(Date.parse(a.expiresAt) - now >= 3600 * 1000);
    assert.equal(signer.verify(recordingId, file, a.path.match(/expires=(\d+)/)![1], a.path.match(/signature=([^&]+)/)![1], now), 'ok');
  });
});
