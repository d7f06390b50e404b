import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsPlugin from 'ajv-formats';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { analyseQueued, processPending } from '../../../src/agents/processing.js';
import { EXPORT_LINE_SCHEMAS } from '../../../src/contracts/export.js';
import { createDatabasePool } from '../../../src/db/pool.js';
import { PROJECT_ROOT } from '../../../src/paths.js';
import { LocalSignalExtractor } from '../../../src/providers/signal-extractor/local.js';
import { createField, createFolder } from '../../../src/recordings/catalog.js';
import { assistantMessage, createTestAgentApp, feedbackEvent, userMessage } from '../../../harness/agents.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { TEST_SIGNING_SECRET } from '../../../harness/config.js';
import { createTestKey, createTestOrg, type TestOrg } from '../../../harness/fixtures.js';
import { createTestDatabase } from '../../../harness/stack.js';

type Line = { type: string } & Record<string, unknown>;

const ajv = new Ajv2020({ strict: true, allErrors: true });
addFormatsPlugin.default(ajv);
const validators = Object.fromEntries(Object.entries(EXPORT_LINE_SCHEMAS).map(([type, schema]) => [type, ajv.compile(schema)]));

/** Parses an export, checks every line against its type's schema, and that the `end` line's counts are the lines'. */
function parseExport(text: string): Line[] {
  assert.ok(text.endsWith('\n'), 'the last line ends with a newline');
  const lines = text
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Line);
  for (const line of lines) {
    const validate = validators[line.type];
    assert.ok(validate, `a known line type: ${line.type}`);
    assert.ok(validate(line), `${line.type}: ${JSON.stringify(validate.errors)} in ${JSON.stringify(line).slice(0, 300)}`);
  }
  assert.equal(lines[0]?.type, 'export');
  const end = lines.at(-1);
  assert.equal(end?.type, 'end', 'ends with its end line');
  const counted: Record<string, number> = {};
  for (const line of lines.slice(1, -1)) counted[line.type] = (counted[line.type] ?? 0) + 1;
  for (const [type, n] of Object.entries(end.counts as Record<string, number>)) assert.equal(counted[type] ?? 0, n, type);
  return lines;
}

/** GET /v3/rest/organization/export and `intake org export` (issue 32, point 3). */
describe('organization export', function () {
  this.timeout(300_000);
  let databaseUrl: string;
  let pool: DatabasePool;
  let api: TestApi;
  let org: TestOrg;
  let adminKey: string;
  let dir: string;

  before(async () => {
    databaseUrl = await createTestDatabase();
    pool = await createDatabasePool(databaseUrl);
    api = await startTestApi({ pool });
    org = await createTestOrg(pool, { credits: 100 });
    adminKey = (await createTestKey(pool, org.organizationId, ['admin'])).apiKey;
    dir = await mkdtemp(path.join(os.tmpdir(), 'intake-export-'));
  });
  after(async () => {
    await api?.close();
    await pool?.end();
    await rm(dir, { recursive: true, force: true });
  });

  const call = (method: string, p: string, json?: unknown, key = org.apiKey) =>
    api.request(p, { method, headers: { 'X-Service-Api-Key': key }, json });

  it('streams every area of the organization as NDJSON, one line per item, each valid against its schema; nothing of another organization', async () => {
    const person = await call('PUT', '/v3/rest/people', {
      email: 'ana@example.com',
      first_name: 'Ana',
      company: { name: 'Acme', domain: 'acme.com' },
    });
    const source = (await call('POST', '/v3/rest/feedback-sources', { name: 'Desk', type: 'api' })).body.id as number;
    const record = await call('POST', `/v3/rest/feedback-sources/${source}/records`, {
      external_id: 'r-1',
      display_ts: '2026-11-26T10:00:00Z',
      person_id: person.body.id as number,
      fields: [{ category: 'content', type: 'string', name: 'text', value: 'Exports are slow' }],
    });
    assert.equal(record.status, 201, JSON.stringify(record.body));
    const field = (await createField(pool, org.organizationId, { name: 'segment', type: 'string' })).id;
    const folder = (await createFolder(pool, org.organizationId, 'Calls')).id;
    const recording = await call('POST', '/v3/rest/recordings', {
      record: { externalId: 'crm-1', values: [{ fieldId: field, value: 'Enterprise' }] },
      name: 'Discovery',
      folderIds: [folder],
      participants: [{ speaker: 0, person: { type: 'reference', personId: person.body.uuid as string } }],
      transcript: {
        utterances: [
          { startSec: 0, endSec: 1, speaker: 0, text: 'Hello.' },
          { startSec: 1, endSec: 2, speaker: 0, text: 'Bye.' },
        ],
      },
    });
    assert.equal(recording.status, 201, JSON.stringify(recording.body));
    const app = await createTestAgentApp(pool, org, 'export-bot');
    const ingested = await api.request('/v3/rest/agent-conversations/ingest', {
      method: 'POST',
      headers: { 'X-Service-Agent-Key': app.secret },
      json: {
        agentKey: app.agentKey,
        externalSessionId: 'chat-1',
        status: 'open',
        participants: [{ externalId: 'cust-1', email: 'ana@example.com' }],
        events: [userMessage(1, 'CSV export breaks'), assistantMessage(2, 'Sorry'), feedbackEvent(3, 'e2', 'negative')],
      },
    });
    assert.equal(ingested.status, 202, JSON.stringify(ingested.body));
    const sessionId = ingested.body.sessionId as string;
    await processPending(pool, sessionId, { processedThroughSequence: null, highestSequence: null, terminal: false }, 10);
    await analyseQueued(pool, sessionId, { extractor: new LocalSignalExtractor(), creditCost: 1, limit: 20, concurrency: 2 });
    // Another organization's data is never in the export.
    const other = await createTestOrg(pool);
    await api.request('/v3/rest/people', {
      method: 'PUT',
      headers: { 'X-Service-Api-Key': other.apiKey },
      json: { email: 'not-ours@example.com' },
    });

    const refused = await call(
      'GET',
      '/v3/rest/organization/export',
      undefined,
      (await createTestKey(pool, org.organizationId, ['feedback:read', 'recordings:read'])).apiKey,
    );
    assert.deepEqual([refused.status, refused.body.errorCode], [403, 'insufficient_scope']);

    const res = await fetch(`${api.url}/v3/rest/organization/export`, { headers: { 'X-Service-Api-Key': adminKey } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/x-ndjson');
    assert.equal(res.headers.get('cache-control'), 'no-store');
    const text = await res.text();
    const lines = parseExport(text);
    assert.ok(!text.includes('not-ours@example.com'));
    assert.equal(lines[0]?.organizationId, org.organizationId);
    const of = (type: string) => lines.filter((l) => l.type === type);
    assert.deepEqual(
      of('person').map((p) => [p.id, p.email, p.company]),
      [[person.body.uuid, 'ana@example.com', { name: 'Acme', domain: 'acme.com' }]],
    );
    assert.deepEqual(
      of('feedback_record').map((r) => [r.sourceId, r.externalId, r.personId]),
      [[source, 'r-1', person.body.uuid]],
    );
    const [rec] = of('recording');
    assert.deepEqual(
      [rec?.id, rec?.folders, rec?.participants, (rec?.utterances as unknown[]).length, rec?.metadata],
      [
        recording.body.id,
        ['Calls'],
        [{ speaker: 0, personId: person.body.uuid }],
        2,
        { externalId: 'crm-1', values: [{ field: 'segment', fieldType: 'string', value: 'Enterprise' }] },
      ],
    );
    assert.deepEqual(
      of('agent_session').map((s) => [s.id, s.agentKey, s.externalSessionId]),
      [[sessionId, 'export-bot', 'chat-1']],
    );
    assert.deepEqual(
      of('agent_event').map((e) => [e.externalEventId, e.sequence, e.eventType]),
      [
        ['e1', 1, 'user_message'],
        ['e2', 2, 'assistant_message'],
        ['e3', 3, 'feedback'],
      ],
    );
    assert.ok(of('agent_signal').length >= 1, 'the session’s signals');
    assert.ok(of('agent_signal').every((s) => s.sessionId === sessionId));
  });

  it('intake org export: 100,000 records to a file with flat memory (RSS against a 1,000-record export)', async () => {
    const env = { ...process.env, DATABASE_URL: databaseUrl, SIGNING_SECRET: TEST_SIGNING_SECRET, LOG_LEVEL: 'silent' };
    /** Runs the CLI's export of `organizationId` into a file; its peak resident memory, read from /proc while it runs. */
    const exportPeak = async (organizationId: string, file: string) => {
      const child = spawn(
        process.execPath,
        // A heap limit far below what the export's data would need held at once (about 30 MB of text, several times that as objects).
        [
          '--max-old-space-size=64',
          '--import',
          'tsx',
          path.join(PROJECT_ROOT, 'src', 'cli', 'main.ts'),
          'org',
          'export',
          '--org',
          organizationId,
        ],
        { env, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      child.stdout.pipe(createWriteStream(file));
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      let peakKb = 0;
      const sample = setInterval(() => {
        void readFile(`/proc/${child.pid}/status`, 'utf8').then(
          (s) => (peakKb = Math.max(peakKb, Number(/VmRSS:\s+(\d+)/.exec(s)?.[1] ?? 0))),
          () => undefined,
        );
      }, 25);
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      clearInterval(sample);
      assert.equal(code, 0, stderr);
      assert.match(stderr, /^exported \{/);
      return peakKb / 1024;
    };
    const filled = async (rows: number) => {
      const o = await createTestOrg(pool);
      const source = await pool.oneFirst(
        sql.type(
          z.object({ id: z.number() }),
        )`INSERT INTO feedback_sources (organization_id, name, type) VALUES (${o.organizationId}, 'Bulk', 'api') RETURNING id`,
      );
      await pool.query(sql.unsafe`
        INSERT INTO feedback_records (organization_id, feedback_source_id, external_id, display_ts, fields)
        SELECT ${o.organizationId}, ${source}, 'bulk-' || i, now(),
          jsonb_build_array(jsonb_build_object('category', 'content', 'type', 'string', 'name', 'text', 'value', repeat('x', 200) || i))
        FROM generate_series(1, ${rows}) AS i`);
      return o.organizationId;
    };
    const small = await exportPeak(await filled(1000), path.join(dir, 'small.ndjson'));
    const bigFile = path.join(dir, 'big.ndjson');
    const big = await exportPeak(await filled(100_000), bigFile);
    const lines = parseExport(await readFile(bigFile, 'utf8'));
    assert.equal(lines.filter((l) => l.type === 'feedback_record').length, 100_000);
    // The file is ~30 MB: a process that held it would grow by that much and more.
    assert.ok(big - small < 25, `peak RSS ${big.toFixed(1)} MiB against ${small.toFixed(1)} MiB for 1,000 records`);
  });
});
