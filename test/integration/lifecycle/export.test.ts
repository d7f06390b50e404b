import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { analyseQueued, processPending } from '../../../src/agents/processing.js';
import { issueCredential } from '../../../src/agents/applications.js';
import { createAjv } from '../../../src/contracts/ajv.js';
import { EXPORT_LINE_SCHEMAS } from '../../../src/contracts/export.js';
import { applicationRow } from '../../../src/db/repositories/agent-applications.js';
import { createDatabasePool } from '../../../src/db/pool.js';
import { exportOrganization } from '../../../src/lifecycle/export.js';
import { ImportRefused, importOrganization, ndjsonLines } from '../../../src/lifecycle/import.js';
import { PROJECT_ROOT } from '../../../src/paths.js';
import { LocalSignalExtractor } from '../../../src/providers/signal-extractor/local.js';
import { createField, createFolder } from '../../../src/recordings/catalog.js';
import { assistantMessage, createTestAgentApp, feedbackEvent, userMessage } from '../../../harness/agents.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { TEST_SIGNING_SECRET } from '../../../harness/config.js';
import { createTestKey, createTestOrg, type TestOrg } from '../../../harness/fixtures.js';
import { createUser } from '../../../src/db/repositories/users.js';
import { createTestDatabase } from '../../../harness/stack.js';

type Line = { type: string } & Record<string, unknown>;

const ajv = createAjv({ allErrors: true });
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
  /** `admin` and every read scope: what an export needs. */
  let exportKey: string;
  let dir: string;

  before(async () => {
    databaseUrl = await createTestDatabase();
    pool = await createDatabasePool(databaseUrl);
    api = await startTestApi({ pool });
    org = await createTestOrg(pool, { credits: 100 });
    adminKey = (await createTestKey(pool, org.organizationId, ['admin'])).apiKey;
    exportKey = (
      await createTestKey(pool, org.organizationId, ['admin', 'feedback:read', 'recordings:read', 'agents:read', 'signals:read'])
    ).apiKey;
    dir = await mkdtemp(path.join(os.tmpdir(), 'intake-export-'));
  });
  after(async () => {
    await api?.close();
    await pool?.end();
    await rm(dir, { recursive: true, force: true });
  });

  const call = (method: string, p: string, json?: unknown, key = org.apiKey) =>
    api.request(p, { method, headers: { 'X-Service-Api-Key': key }, json });

  type Response = Awaited<ReturnType<TestApi['request']>>;
  interface Filled {
    person: Response;
    source: number;
    recording: Response;
    sessionId: string;
    /** The conversation's first request, sent again after an import (its events deduplicate). */
    chat: Record<string, unknown>;
    /** The user the application's conversations are restricted to, and the owner among the participants. */
    alice: string;
    bob: string;
  }
  let filling: Promise<Filled> | undefined;
  /**
   * The organization's data, made once for the tests that read it: a person of a company, a source
   * and its record, a recording with folder, metadata, participant and transcript, an application
   * readable by one user with a processed conversation (an owner among its participants), and an
   * application deleted with its conversation kept.
   */
  const filled = () => (filling ??= fill());
  async function fill(): Promise<Filled> {
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
    const alice = (await createUser(pool, { organizationId: org.organizationId, email: 'Alice@Example.com', role: 'member' })).id;
    const bob = (await createUser(pool, { organizationId: org.organizationId, email: 'bob@example.com', role: 'member' })).id;
    const app = await createTestAgentApp(pool, org, 'export-bot', {
      settings: { redactedFieldNames: ['apiToken'], conversationAccess: { type: 'users', userIds: [alice] } },
    });
    const chat = {
      agentKey: app.agentKey,
      externalSessionId: 'chat-1',
      status: 'open',
      participants: [
        { externalId: 'cust-1', email: 'ana@example.com', personId: person.body.uuid as string },
        { externalId: 'agent-owner', ownerUserId: bob },
      ],
      events: [userMessage(1, 'CSV export breaks'), assistantMessage(2, 'Sorry'), feedbackEvent(3, 'e2', 'negative')],
    };
    const ingested = await api.request('/v3/rest/agent-conversations/ingest', {
      method: 'POST',
      headers: { 'X-Service-Agent-Key': app.secret },
      json: chat,
    });
    assert.equal(ingested.status, 202, JSON.stringify(ingested.body));
    const sessionId = ingested.body.sessionId as string;
    await processPending(pool, sessionId, { processedThroughSequence: null, highestSequence: null, terminal: false }, 10);
    await analyseQueued(pool, sessionId, { extractor: new LocalSignalExtractor(), creditCost: 1, limit: 20, concurrency: 2 });
    // An application deleted with its conversations kept: exported, and imported deleted.
    const old = await createTestAgentApp(pool, org, 'old-bot', { settings: { contentCapture: false } });
    const kept = await api.request('/v3/rest/agent-conversations/ingest', {
      method: 'POST',
      headers: { 'X-Service-Agent-Key': old.secret },
      json: { agentKey: old.agentKey, externalSessionId: 'chat-old', status: 'ended', events: [userMessage(1, 'Hello')] },
    });
    assert.equal(kept.status, 202, JSON.stringify(kept.body));
    assert.equal((await call('DELETE', `/v3/rest/agent-applications/${old.app.id}?sessions=keep`)).status, 204);
    return { person, source, recording, sessionId, chat, alice, bob };
  }

  it('streams every area of the organization as NDJSON, one line per item, each valid against its schema; nothing of another organization', async () => {
    const { person, source, recording, sessionId } = await filled();
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
    // An admin-only key reads no transcript or chat elsewhere: nor through the export (issue 50).
    const adminOnly = await call('GET', '/v3/rest/organization/export', undefined, adminKey);
    assert.deepEqual(
      [adminOnly.status, adminOnly.body],
      [
        403,
        {
          errorCode: 'insufficient_scope',
          message:
            "The export holds every kind of data: the credential needs 'admin' and 'feedback:read', 'recordings:read', 'agents:read', 'signals:read'; it lacks 'feedback:read', 'recordings:read', 'agents:read', 'signals:read'.",
          requiredScope: 'feedback:read',
          missingScopes: ['feedback:read', 'recordings:read', 'agents:read', 'signals:read'],
        },
      ],
    );

    const res = await fetch(`${api.url}/v3/rest/organization/export`, { headers: { 'X-Service-Api-Key': exportKey } });
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
      of('agent_application')
        .map((a) => [a.agentKey, a.deleted, a.contentCapture, a.accessUserEmails])
        .sort(),
      [
        ['export-bot', false, true, ['alice@example.com']],
        ['old-bot', true, false, []],
      ],
    );
    assert.deepEqual(
      of('agent_session')
        .map((s) => [s.agentKey, s.externalSessionId, s.restrictedToUserEmails])
        .sort(),
      [
        ['export-bot', 'chat-1', ['alice@example.com']],
        ['old-bot', 'chat-old', null],
      ],
    );
    const chat = of('agent_session').find((s) => s.agentKey === 'export-bot');
    assert.equal(chat?.id, sessionId);
    assert.deepEqual(
      (chat?.participants as Line[]).map((p) => [p.participantKey, p.personId, p.ownerUserEmail]),
      [
        ['ext:cust-1', person.body.uuid, null],
        ['ext:agent-owner', null, 'bob@example.com'],
      ],
    );
    assert.deepEqual(
      of('agent_event')
        .filter((e) => e.sessionId === sessionId)
        .map((e) => [e.externalEventId, e.sequence, e.eventType]),
      [
        ['e1', 1, 'user_message'],
        ['e2', 2, 'assistant_message'],
        ['e3', 3, 'feedback'],
      ],
    );
    assert.ok(of('agent_signal').length >= 1, 'the session’s signals');
    assert.ok(of('agent_signal').every((s) => s.sessionId === sessionId));
  });

  /** The export of an organization, as text (the REST stream's code, without HTTP). */
  const exportText = async (organizationId: string) => {
    let text = '';
    await exportOrganization(pool, organizationId, async (chunk) => void (text += chunk));
    return text;
  };
  /** Runs `intake org import --org O --file F`; its exit code, stdout and stderr. */
  const cliImport = async (organizationId: string, file: string) => {
    const env = { ...process.env, DATABASE_URL: databaseUrl, SIGNING_SECRET: TEST_SIGNING_SECRET, LOG_LEVEL: 'silent' };
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(PROJECT_ROOT, 'src', 'cli', 'main.ts'), 'org', 'import', '--org', organizationId, '--file', file],
      { env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    return { code, stdout, stderr };
  };

  it('intake org import: an export imported into an empty organization exports again the same, with new ids', async () => {
    const data = await filled();
    const first = await exportText(org.organizationId);
    const file = path.join(dir, 'round-trip.ndjson');
    await writeFile(file, first);
    const target = await createTestOrg(pool);
    // Users are accounts, not data: the target has Alice (by e-mail, in another case) and not Bob.
    const targetAlice = (await createUser(pool, { organizationId: target.organizationId, email: 'alice@EXAMPLE.com', role: 'member' })).id;

    const run = await cliImport(target.organizationId, file);
    assert.equal(run.code, 0, run.stderr);
    const result = JSON.parse(run.stdout) as {
      counts: Record<string, number>;
      usersNotFound: string[];
      exportedFrom: { organizationId: string };
    };
    const firstLines = parseExport(first);
    assert.deepEqual(result.counts, firstLines.at(-1)?.counts);
    assert.deepEqual(result.usersNotFound, ['bob@example.com']);
    assert.equal(result.exportedFrom.organizationId, org.organizationId);

    const secondLines = parseExport(await exportText(target.organizationId));
    // Pair the two exports' ids by what identifies each item, then compare every line with the ids mapped.
    const ids = new Map<unknown, unknown>([[org.organizationId, target.organizationId]]);
    const sourceIds = new Map<unknown, unknown>();
    const pair = (type: string, key: (l: Line) => string, into = ids) => {
      const second = new Map(secondLines.filter((l) => l.type === type).map((l) => [key(l), l]));
      for (const l of firstLines.filter((x) => x.type === type)) {
        const other = second.get(key(l));
        assert.ok(other, `${type} ${key(l)} imported`);
        assert.notEqual(other.id, l.id, `${type} ${key(l)}: a new id`);
        into.set(l.id, other.id);
      }
    };
    pair('feedback_source', (l) => String(l.name), sourceIds);
    pair('person', (l) => String(l.email));
    pair('recording', (l) => String(l.name));
    pair('agent_application', (l) => String(l.agentKey));
    pair('agent_session', (l) => `${String(l.agentKey)}/${String(l.externalSessionId)}`);
    const mapIds = (value: unknown): unknown => {
      if (ids.has(value)) return ids.get(value);
      if (Array.isArray(value)) return value.map(mapIds);
      if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapIds(v)]));
      return value;
    };
    const normal = (l: Line) => {
      const { exportedAt: _at, ...rest } = l.type === 'agent_signal' ? { ...l, id: 'signal' } : l;
      return JSON.stringify(rest, Object.keys(rest).sort());
    };
    const byType = (lines: Line[]) => {
      const m = new Map<string, string[]>();
      for (const l of lines) m.set(l.type, [...(m.get(l.type) ?? []), normal(l)].sort());
      return m;
    };
    const expected = byType(
      firstLines.map((l) => {
        const mapped = mapIds(l) as Line;
        // Sources' ids are numbers: mapped by their fields only.
        if (l.type === 'feedback_source') return { ...mapped, id: sourceIds.get(l.id) };
        if (l.type === 'feedback_record') return { ...mapped, sourceId: sourceIds.get(l.sourceId) };
        // Bob is no user of the target: his conversation ownership is left out.
        if (l.type !== 'agent_session') return mapped;
        const participants = (mapped.participants as Line[]).map((p) => ({
          ...p,
          ownerUserEmail: p.ownerUserEmail === 'bob@example.com' ? null : p.ownerUserEmail,
        }));
        return { ...mapped, participants };
      }),
    );
    const actual = byType(secondLines);
    assert.deepEqual([...actual.keys()], [...expected.keys()]);
    for (const [type, lines] of expected) assert.deepEqual(actual.get(type), lines, type);

    // What the lines do not show: the imported conversation is readable by the target's Alice, and
    // the same events sent again deduplicate (the hashes came along) and make no new work.
    const session = await pool.one(sql.type(
      z.object({
        id: z.string(),
        restricted_to: z.array(z.string()).nullable(),
        processing_status: z.string(),
        watermark: z.number().nullable(),
        event_count: z.number(),
      }),
    )`
      SELECT s.id, s.restricted_to, s.processing_status, s.processed_through_sequence AS watermark, s.event_count
      FROM agent_sessions s JOIN agent_applications a ON a.id = s.application_id
      WHERE s.organization_id = ${target.organizationId} AND a.agent_key = 'export-bot'`);
    assert.deepEqual(
      [session.restricted_to, session.processing_status, session.watermark, session.event_count],
      [[targetAlice], 'pending', 3, 3],
    );
    const app = await pool.one(sql.type(applicationRow)`
      SELECT * FROM agent_applications WHERE organization_id = ${target.organizationId} AND agent_key = 'export-bot'`);
    const { secret } = await issueCredential(pool, app);
    const again = await api.request('/v3/rest/agent-conversations/ingest', {
      method: 'POST',
      headers: { 'X-Service-Agent-Key': secret },
      json: { ...data.chat, participants: undefined },
    });
    assert.equal(again.status, 202, JSON.stringify(again.body));
    assert.deepEqual(
      [again.body.sessionId, again.body.acceptedEventCount, again.body.deduplicatedEventCount, again.body.revisedEventCount],
      [session.id, 0, 3, 0],
    );
  });

  it('intake org import refuses, and imports nothing: a file cut short, a bad line, a dangling reference, wrong counts, an organization with data', async () => {
    await filled();
    const good = (await exportText(org.organizationId)).trimEnd().split('\n');
    const target = await createTestOrg(pool);
    // A file that is not there: the CLI says so (it crashed on an unhandled 'error' event of its stream).
    const missing = await cliImport(target.organizationId, path.join(dir, 'no-such-export.ndjson'));
    assert.deepEqual([missing.code, missing.stdout], [1, '']);
    assert.equal(missing.stderr, `intake: cannot read ${path.join(dir, 'no-such-export.ndjson')}: no such file\n`);
    const attempt = (lines: string[]) =>
      importOrganization(pool, target.organizationId, ndjsonLines(Readable.from([`${lines.join('\n')}\n`])));
    const personLine = good.findIndex((l) => (JSON.parse(l) as Line).type === 'person');
    const recordLine = good.findIndex((l) => (JSON.parse(l) as Line).type === 'feedback_record');
    const edited = (index: number, edit: (l: Line) => Line) =>
      good.map((l, i) => (i === index ? JSON.stringify(edit(JSON.parse(l) as Line)) : l));
    const end = JSON.parse(good.at(-1)!) as { counts: Record<string, number> };
    const cases: [string, string[], RegExp][] = [
      ['cut short', good.slice(0, -1), /^the file ends at line \d+ without its end line \(cut short\?\); nothing was imported$/],
      ['not JSON', good.map((l, i) => (i === 2 ? l.slice(0, 20) : l)), /^line 3: is not JSON; nothing was imported$/],
      [
        'a field of another type',
        edited(personLine, (l) => ({ ...l, boundary: 'partner' })),
        new RegExp(`^line ${personLine + 1}: \\(person\\) boundary: must be one of: external, internal`),
      ],
      ['an unknown type', [...good.slice(0, 1), '{"type":"invoice"}', ...good.slice(1)], /^line 2: has no known type \("invoice"\)/],
      [
        'a dangling reference',
        edited(recordLine, (l) => ({ ...l, personId: '00000000-0000-4000-8000-000000000000' })),
        new RegExp(`^line ${recordLine + 1}: personId 00000000-0000-4000-8000-000000000000 is not a person of the file`),
      ],
      [
        'out of order',
        [good[0]!, good[recordLine]!, ...good.slice(1).filter((_, i) => i + 1 !== recordLine)],
        /^line 3: a feedback_source line after feedback_record lines/,
      ],
      [
        'wrong counts',
        [...good.slice(0, -1), JSON.stringify({ type: 'end', counts: { ...end.counts, person: 7 } })],
        /^the end line counts 7 person lines and the file has 1/,
      ],
      [
        'the same e-mail twice',
        [
          ...good.slice(0, personLine + 1),
          JSON.stringify({
            ...(JSON.parse(good[personLine]!) as Line),
            id: '00000000-0000-4000-8000-000000000001',
            email: 'ANA@example.com',
          }),
          ...good.slice(personLine + 1),
        ],
        /break people_organization_email_key; nothing was imported$/,
      ],
    ];
    for (const [what, lines, message] of cases) {
      await assert.rejects(attempt(lines), (e: Error) => e instanceof ImportRefused && message.test(e.message), what);
      assert.equal(
        await pool.oneFirst(sql.type(z.object({ n: z.number() }))`
        SELECT (SELECT count(*) FROM people WHERE organization_id = ${target.organizationId})
          + (SELECT count(*) FROM feedback_sources WHERE organization_id = ${target.organizationId})
          + (SELECT count(*) FROM companies WHERE organization_id = ${target.organizationId})::int AS n`),
        0,
        `${what}: nothing stored`,
      );
    }
    // An organization with data of its own is refused before a line is read, through the CLI too.
    const file = path.join(dir, 'into-full.ndjson');
    await writeFile(file, `${good.join('\n')}\n`);
    const refused = await cliImport(org.organizationId, file);
    assert.equal(refused.code, 1);
    assert.match(
      refused.stderr,
      /^intake: an import needs an empty organization, and this one holds feedback sources, people, recordings, folders, metadata fields, agent applications, agent sessions\n$/,
    );
  });

  it('intake org export: 100,000 records to a file with flat memory (RSS against a 1,000-record export)', async () => {
    const env = { ...process.env, DATABASE_URL: databaseUrl, SIGNING_SECRET: TEST_SIGNING_SECRET, LOG_LEVEL: 'silent' };
    /** Runs the CLI's export of `organizationId` into a file; its peak resident memory (MiB), as the kernel counted it. */
    const exportPeak = async (organizationId: string, file: string) => {
      const peakFile = `${file}.peak-rss`;
      const child = spawn(
        process.execPath,
        // A heap limit far below what the export's data would need held at once (about 30 MB of text, several times that as objects).
        [
          '--max-old-space-size=64',
          '--import',
          'tsx',
          '--import',
          path.join(PROJECT_ROOT, 'test', 'helpers', 'peak-rss.ts'),
          path.join(PROJECT_ROOT, 'src', 'cli', 'main.ts'),
          'org',
          'export',
          '--org',
          organizationId,
        ],
        { env: { ...env, PEAK_RSS_FILE: peakFile }, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      child.stdout.pipe(createWriteStream(file));
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      assert.equal(code, 0, stderr);
      assert.match(stderr, /^exported \{/);
      return Number(await readFile(peakFile, 'utf8')) / 1024;
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
    // The file is ~30 MB: a process that held it would grow by several times that as objects (and
    // run out of its 64 MB heap first). Both peak at about 130 MiB alone; in the full suite a big
    // export was once seen at 160 MiB (sampled, cause not found).
    assert.ok(big - small < 40, `peak RSS ${big.toFixed(1)} MiB against ${small.toFixed(1)} MiB for 1,000 records`);
  });
});
