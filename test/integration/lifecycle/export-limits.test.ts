import { strict as assert } from 'node:assert';
import { request, type IncomingMessage } from 'node:http';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { createDatabasePool } from '../../../src/db/pool.js';
import { EXPORT_CHUNK_BYTES, exportOrganization } from '../../../src/lifecycle/export.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { testConfig } from '../../../harness/config.js';
import { createTestKey, createTestOrg } from '../../../harness/fixtures.js';
import { createTestDatabase } from '../../../harness/stack.js';
import { waitFor } from '../../../harness/wait.js';

const EXPORT_SCOPES = ['admin', 'feedback:read', 'recordings:read', 'agents:read', 'signals:read'] as const;

/**
 * Exports nobody reads (issue 50, finding 3): an export is written a piece at a time as the client
 * reads, a client that stops reading is cut off after EXPORT_STALL_TIMEOUT_SECONDS with its
 * transaction released, and exports running at once are capped per organization and per process.
 */
describe('organization export: unread exports, concurrency and stalls', function () {
  this.timeout(120_000);
  let pool: DatabasePool;
  let api: TestApi;
  const open: IncomingMessage[] = [];

  /** An organization with about `megabytes` MB of feedback records, and a key that may export it. */
  async function bigOrganization(megabytes: number) {
    const org = await createTestOrg(pool);
    const source = await pool.oneFirst(sql.type(z.object({ id: z.number() }))`
      INSERT INTO feedback_sources (organization_id, name, type) VALUES (${org.organizationId}, 'Bulk', 'api') RETURNING id`);
    await pool.query(sql.unsafe`
      INSERT INTO feedback_records (organization_id, feedback_source_id, external_id, display_ts, fields)
      SELECT ${org.organizationId}, ${source}, 'bulk-' || i, now(),
        jsonb_build_array(jsonb_build_object('category', 'content', 'type', 'string', 'name', 'text', 'value', repeat(md5(i::text), 32)))
      FROM generate_series(1, ${megabytes * 1000}) AS i`);
    return { ...org, exportKey: (await createTestKey(pool, org.organizationId, [...EXPORT_SCOPES])).apiKey };
  }

  /** Starts an export whose answer is never read: its status, and the response left paused. */
  function unreadExport(key: string): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const req = request(`${api.url}/v3/rest/organization/export`, { headers: { 'X-Service-Api-Key': key } }, (res) => {
        res.pause();
        open.push(res);
        resolve(res);
      });
      req.on('error', reject);
      req.end();
    });
  }

  /** Connections in an export's snapshot transaction (its lock, or a batch's read as its last statement). */
  const exportTransactions = () =>
    pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND xact_start IS NOT NULL
        AND (query LIKE '%pg_try_advisory_xact_lock%' OR query LIKE '%json_build_object(''type''%')`);

  before(async () => {
    pool = await createDatabasePool(await createTestDatabase());
    api = await startTestApi({
      pool,
      config: testConfig({ EXPORT_MAX_CONCURRENT: '2', EXPORT_STALL_TIMEOUT_SECONDS: '3' }),
    });
  });
  after(async () => {
    for (const res of open) res.destroy();
    await api?.close();
    await pool?.end();
  });

  it('writes a batch a piece at a time, each after the last was taken: a reader that takes nothing holds the export at its first piece', async () => {
    const org = await bigOrganization(2);
    const pieces: number[] = [];
    let release!: () => void;
    const stuck = new Promise<void>((resolve) => (release = resolve));
    const running = exportOrganization(pool, org.organizationId, async (chunk) => {
      pieces.push(Buffer.byteLength(chunk));
      // The header line, then the first piece of records: the reader stops taking.
      if (pieces.length === 2) await stuck;
    });
    assert.ok(await waitFor(async () => pieces.length === 2, 10_000));
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(pieces.length, 2, 'nothing more is read or handed over while the reader takes nothing');
    assert.ok(pieces[1]! <= EXPORT_CHUNK_BYTES + 2_000, `the first piece is ${pieces[1]} bytes`);
    release();
    const counts = await running;
    assert.equal(counts.feedback_record, 2000);
    assert.ok(Math.max(...pieces) <= EXPORT_CHUNK_BYTES + 2_000, `pieces of at most ${Math.max(...pieces)} bytes`);
    assert.ok(pieces.length > 30, `${pieces.length} pieces for about 2 MB`);
  });

  it('one export of an organization at a time (429 too_many_exports), EXPORT_MAX_CONCURRENT per process; a client that stops reading is cut off and its transaction released', async () => {
    // More than the kernel's socket buffers on both ends hold (several MB each on loopback).
    const a = await bigOrganization(40);
    const b = await bigOrganization(40);
    const c = await createTestOrg(pool);
    const cKey = (await createTestKey(pool, c.organizationId, [...EXPORT_SCOPES])).apiKey;
    const call = (key: string) => fetch(`${api.url}/v3/rest/organization/export`, { headers: { 'X-Service-Api-Key': key } });

    const stalled = await unreadExport(a.exportKey);
    assert.equal(stalled.statusCode, 200);
    const second = await call(a.exportKey);
    assert.equal(second.status, 429);
    assert.equal(second.headers.get('retry-after'), '30');
    assert.deepEqual(await second.json(), {
      errorCode: 'too_many_exports',
      message: 'An export of this organization is already running: retry once it has finished.',
    });

    const other = await unreadExport(b.exportKey);
    assert.equal(other.statusCode, 200, 'another organization exports beside it');
    const third = await call(cKey);
    assert.equal(third.status, 429);
    assert.equal(third.headers.get('retry-after'), '60');
    assert.deepEqual(await third.json(), {
      errorCode: 'too_many_exports',
      message: '2 exports are running on this server: retry in a minute.',
    });
    assert.ok((await exportTransactions()) >= 1, 'the unread exports hold their transactions while they wait');

    // Neither client reads: after EXPORT_STALL_TIMEOUT_SECONDS both are cut off and their transactions end.
    assert.ok(await waitFor(async () => (await exportTransactions()) === 0, 30_000), 'no export transaction is left open');
    // What the clients then read ends without the `end` line: the response was cut short, not finished.
    const rest = (res: IncomingMessage) =>
      new Promise<string>((resolve) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
        res.on('error', () => undefined);
        res.on('close', () => resolve(text));
        res.resume();
      });
    for (const text of await Promise.all([rest(stalled), rest(other)])) {
      assert.ok(text.length > 1_000_000, `${text.length} bytes were sent before the stall`);
      assert.ok(!text.includes('"type":"end"'), 'no end line');
    }
    const answered = await call(cKey);
    assert.equal(answered.status, 200, 'the slots are free again');
    assert.match(await answered.text(), /"type":"end"/);
    const again = await call(a.exportKey);
    assert.equal(again.status, 200, "the organization's lock went with its transaction");
    const text = await again.text();
    assert.equal(text.trimEnd().split('\n').length, 40_000 + 3, 'the header, a source, 40,000 records and the end line');
  });
});
