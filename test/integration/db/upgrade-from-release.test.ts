import { strict as assert } from 'node:assert';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream, readdirSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { createGunzip } from 'node:zlib';
import type { DatabasePool } from 'slonik';
import { migrate, readMigrations } from '../../../src/db/migrate.js';
import { createDatabasePool } from '../../../src/db/pool.js';
import { PROJECT_ROOT } from '../../../src/paths.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { testConfig } from '../../../harness/config.js';
import { isMp4 } from '../../../harness/media.js';
import { appliedMigrations, createEmptyDatabase } from '../../../harness/stack.js';
import { postgresClientTools } from '../../helpers/postgres-tools.js';
import type { ReleaseFixture } from '../../upgrade/release-fixture.js';

const exec = promisify(execFile);
const RELEASES = path.join(PROJECT_ROOT, 'test', 'fixtures', 'releases');

/** Restores a plain pg_dump (gzip) into `url` with PostgreSQL 18's psql, stopping at the first error. */
async function restore(dumpFile: string, url: string): Promise<void> {
  const { psql } = await postgresClientTools();
  const child = spawn(psql, ['--no-psqlrc', '--quiet', '--set', 'ON_ERROR_STOP=1', '--dbname', url], { stdio: ['pipe', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const closed = once(child, 'close');
  await pipeline(createReadStream(dumpFile), createGunzip(), child.stdin);
  const [code] = (await closed) as [number];
  assert.equal(code, 0, `psql restored the dump: ${stderr}`);
}

/**
 * Values this version reports differently on purpose, each with the decision that changed it: a
 * field (by its key) whose release value `was` may now read as one of `now`. Nothing else may change.
 */
const CHANGED: readonly { key: string; was: unknown; now: readonly unknown[]; why: string }[] = [
  {
    key: 'processingStatus',
    was: 'pending',
    now: ['processing', 'completed'],
    why: 'decision 0209: reads report where processing stands; 0.1.0 read every processed session as pending',
  },
];

/**
 * Asserts that `actual` holds everything `expected` holds (a newer release may add fields, never
 * drop or change one, but for CHANGED): objects key by key, arrays element by element with the same length. Links
 * the API signs (playback URLs) are compared by their path: the host, expiry and signature are the
 * answering deployment's.
 */
function assertHolds(actual: unknown, expected: unknown, where: string): void {
  if (typeof expected === 'string' && /^https?:\/\//.test(expected)) {
    assert.equal(typeof actual, 'string', `${where}: a link`);
    assert.equal(new URL(actual as string).pathname, new URL(expected).pathname, `${where}: the same resource`);
    return;
  }
  if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual), `${where}: an array`);
    assert.equal(actual.length, expected.length, `${where}: as many items`);
    expected.forEach((item, i) => assertHolds(actual[i], item, `${where}[${i}]`));
    return;
  }
  if (expected !== null && typeof expected === 'object') {
    assert.ok(actual !== null && typeof actual === 'object' && !Array.isArray(actual), `${where}: an object`);
    for (const [key, value] of Object.entries(expected)) {
      assert.ok(key in actual, `${where}.${key}: still answered`);
      assertHolds((actual as Record<string, unknown>)[key], value, `${where}.${key}`);
    }
    return;
  }
  const changed = CHANGED.find((c) => where.endsWith(`.${c.key}`) && c.was === expected);
  if (changed?.now.includes(actual)) return;
  assert.deepEqual(actual, expected, changed ? `${where} (${changed.why})` : where);
}

const versions = readdirSync(RELEASES).sort();

describe('upgrading a database from an earlier release', function () {
  this.timeout(120_000);

  it('has a fixture of every earlier release (made by test/upgrade/make-release-fixture.ts)', () => {
    assert.ok(versions.includes('0.1.0'), 'the first release, 0.1.0 (commit 49b18c0)');
  });

  for (const version of versions) {
    describe(`from ${version}`, () => {
      let fixture: ReleaseFixture;
      let url: string;
      let releaseApplied: string[];
      let applied: string[];
      let pool: DatabasePool;
      let api: TestApi;
      let mediaDir: string;
      const key = () => ({ 'X-Service-Api-Key': fixture.apiKey });

      before(async () => {
        const dir = path.join(RELEASES, version);
        fixture = JSON.parse(await readFile(path.join(dir, 'release.json'), 'utf8')) as ReleaseFixture;
        url = await createEmptyDatabase();
        await restore(path.join(dir, 'database.sql.gz'), url);
        releaseApplied = await appliedMigrations(url);
        applied = (await migrate(url)).applied;
        mediaDir = await mkdtemp(path.join(os.tmpdir(), `intake-release-media-${version}-`));
        await exec('tar', ['-xzf', path.join(dir, 'media.tar.gz'), '-C', mediaDir]);
        pool = await createDatabasePool(url);
        api = await startTestApi({ pool, databaseUrl: url, config: testConfig({ STORAGE_DIR: mediaDir }) });
      });

      after(async () => {
        await api?.close();
        await pool?.end();
        if (mediaDir) await rm(mediaDir, { recursive: true, force: true });
      });

      it('migrates to this version: exactly the migrations the release lacked, in order', async () => {
        const names = (await readMigrations()).map((m) => m.name);
        assert.ok(releaseApplied.length > 0, 'the dump holds the release’s schema_migrations');
        assert.deepEqual(releaseApplied, names.slice(0, releaseApplied.length), 'the release applied a prefix of these files, unchanged');
        assert.deepEqual(applied, names.slice(releaseApplied.length));
        assert.deepEqual(await appliedMigrations(url), names);
      });

      it('answers every read the release answered, with all that the release answered', async () => {
        assert.ok(Object.keys(fixture.reads).length >= 15);
        for (const [p, expected] of Object.entries(fixture.reads)) {
          const response = await api.request(p, { headers: key() });
          assert.equal(response.status, 200, `GET ${p}: ${JSON.stringify(response.body)}`);
          assertHolds(response.body, expected, `GET ${p}`);
        }
      });

      it("serves the media the release's worker encoded", async () => {
        const recording = await api.request(`/v3/rest/recordings/${fixture.ids.uploadedId}`, { headers: key() });
        assert.equal(recording.body.asset.status, 'completed');
        const media = await fetch(recording.body.asset.url as string, { headers: { Range: 'bytes=0-15' } });
        assert.equal(media.status, 206);
        const head = Buffer.from(await media.arrayBuffer());
        assert.ok(isMp4(head), 'an MP4 (AAC in .m4a) file');
      });

      it('takes new writes on the migrated data, and its unique keys still hold', async () => {
        const { sourceId } = fixture.ids;
        const body = (externalId: string) => ({
          display_ts: '2026-11-03T09:00:00Z',
          external_id: externalId,
          fields: [{ category: 'content', type: 'string', name: 'body', value: 'After the upgrade' }],
        });
        const created = await api.request(`/v3/rest/feedback-sources/${sourceId}/records`, {
          method: 'POST',
          headers: key(),
          json: body(`after-${version}`),
        });
        assert.equal(created.status, 201, JSON.stringify(created.body));
        const again = await api.request(`/v3/rest/feedback-sources/${sourceId}/records`, {
          method: 'POST',
          headers: key(),
          json: body('ticket-4711'),
        });
        assert.equal(again.status, 409);
        assert.equal(again.body.errorCode, 'duplicate_external_id');
        assert.equal(String(again.body.id), fixture.ids.recordId);
        const recording = await api.request('/v3/rest/recordings', {
          method: 'POST',
          headers: key(),
          json: { record: { externalId: 'crm-call-981' } },
        });
        assert.equal(recording.status, 409, 'the release’s external id is still taken');
        assert.equal(recording.body.recordingId, fixture.ids.transcribedId);
      });
    });
  }
});
