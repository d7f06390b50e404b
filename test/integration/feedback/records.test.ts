import { strict as assert } from 'node:assert';
import { sql } from 'slonik';
import { feedbackContext, type FeedbackContext } from '../../helpers/feedback.js';

const validFields = [
  { category: 'content', type: 'string', name: 'body', value: 'The export button is broken' },
  { category: 'created_at', type: 'datetime', name: 'opened_at', value: '2026-11-01T10:00:00+01:00' },
  { category: 'metadata', type: 'date', name: 'due', value: '2024-02-29' },
  { category: 'metadata', type: 'integer', name: 'priority', value: 2 },
  { category: 'metadata', type: 'float', name: 'score', value: 4.5 },
  { category: 'metadata', type: 'boolean', name: 'escalated', value: false },
  { category: 'metadata', type: 'json', name: 'tags', value: { list: ['export', 'csv'] } },
  { category: 'identifier', type: 'string', name: 'ticket_url', value: 'https://support.example.com/t/1' },
  { category: 'identity', type: 'string', name: 'customer_email', value: 'ada@example.com' },
];

describe('feedback records', () => {
  let f: FeedbackContext;
  let req: ReturnType<FeedbackContext['as']>;
  let sourceId: number;
  let personId: number;
  let otherPersonId: number;
  const recordsPath = () => `/v3/rest/feedback-sources/${sourceId}/records`;
  const count = async () => f.pool.oneFirst(sql.unsafe`SELECT count(*)::int FROM feedback_records`);

  before(async () => {
    f = await feedbackContext();
    req = f.as(f.org.apiKey);
    sourceId = (await req('/v3/rest/feedback-sources', { method: 'POST', json: { name: 'Support', type: 'api' } })).body.id;
    personId = (await req('/v3/rest/people', { method: 'PUT', json: { email: 'ada@example.com' } })).body.id;
    otherPersonId = (await f.as(f.other.apiKey)('/v3/rest/people', { method: 'PUT', json: { email: 'eve@example.com' } })).body.id;
  });
  after(async () => f?.close());

  it('creates a record with every field type: 201, Location and the spec shape', async () => {
    const res = await req(recordsPath(), {
      method: 'POST',
      json: { person_id: personId, display_ts: '2026-11-01T09:00:00Z', external_id: 'ticket-1', fields: validFields },
    });
    assert.equal(res.status, 201);
    assert.equal(res.headers.get('location'), `${recordsPath()}/${res.body.id}`);
    assert.deepEqual(
      { ...res.body, id: 0, created_at: '' },
      {
        id: 0,
        person_id: personId,
        feedback_source_id: sourceId,
        display_ts: '2026-11-01T09:00:00.000Z',
        external_id: 'ticket-1',
        fields: validFields,
        created_at: '',
      },
    );
    const read = await req(`${recordsPath()}/${res.body.id}`);
    assert.deepEqual(read.body, res.body);
  });

  it('accepts a record without person_id or display_ts (display_ts defaults to the time received)', async () => {
    const before = Date.now();
    const res = await req(recordsPath(), { method: 'POST', json: { external_id: 'ticket-2', fields: [validFields[0]] } });
    assert.equal(res.status, 201);
    assert.equal(res.body.person_id, null);
    assert.ok(Date.parse(res.body.display_ts) >= before - 5_000);
  });

  it('display_ts with any RFC 3339 offset (PostgreSQL holds only ±15:59) is stored as its UTC instant', async () => {
    const res = await req(recordsPath(), {
      method: 'POST',
      json: { external_id: 'ticket-offset', display_ts: '2026-11-01T09:00:00+20:00', fields: [validFields[0]] },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.display_ts, '2026-10-31T13:00:00.000Z');
  });

  const wrongValues: [string, unknown, string][] = [
    ['boolean', 'true', 'must be a boolean for type boolean'],
    ['string', 12, 'must be a string for type string'],
    ['integer', 1.5, 'must be a safe integer for type integer'],
    ['integer', 2 ** 60, 'must be a safe integer for type integer'],
    ['float', '4.5', 'must be a finite number for type float'],
    ['date', '2023-02-29', 'must be a calendar date (YYYY-MM-DD) for type date'],
    ['date', '2023-01-01T00:00:00Z', 'must be a calendar date (YYYY-MM-DD) for type date'],
    ['datetime', '2026-11-01 10:00', 'must be an ISO 8601 date-time with an offset for type datetime'],
    ['datetime', '2026-11-01T10:00:00', 'must be an ISO 8601 date-time with an offset for type datetime'],
  ];
  for (const [type, value, message] of wrongValues) {
    it(`answers 400 for a ${type} field holding ${JSON.stringify(value)}`, async () => {
      const res = await req(recordsPath(), {
        method: 'POST',
        json: { external_id: `bad-${type}`, fields: [validFields[0], { category: 'metadata', type, name: 'x', value }] },
      });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, {
        message: 'The request is invalid.',
        errorCode: 'validation_failed',
        errors: [{ path: 'body.fields.1.value', message }],
      });
    });
  }

  it('answers 400 for an unknown category or type, a missing name or value, and reports all of them', async () => {
    const before = await count();
    const res = await req(recordsPath(), {
      method: 'POST',
      json: {
        external_id: 'bad-shape',
        fields: [
          { category: 'mood', type: 'emoji', name: 'x', value: 1 },
          { category: 'content', type: 'string' },
        ],
      },
    });
    assert.equal(res.status, 400);
    assert.deepEqual(
      [...res.body.errors].sort((a: { path: string }, b: { path: string }) => a.path.localeCompare(b.path)),
      [
        { path: 'body.fields.0.category', message: 'must be one of: content, created_at, identifier, identity, metadata' },
        { path: 'body.fields.0.type', message: 'must be one of: boolean, date, datetime, float, integer, json, string' },
        { path: 'body.fields.1.name', message: "must have required property 'name'" },
        { path: 'body.fields.1.value', message: "must have required property 'value'" },
      ],
    );
    assert.equal(await count(), before);
  });

  it('answers 400 for missing required fields, wrong field types and malformed JSON', async () => {
    const missing = await req(recordsPath(), { method: 'POST', json: {} });
    assert.equal(missing.status, 400);
    assert.deepEqual(new Set(missing.body.errors.map((e: { path: string }) => e.path)), new Set(['body.external_id', 'body.fields']));
    const types = await req(recordsPath(), {
      method: 'POST',
      json: { external_id: 5, person_id: 'x', display_ts: 'yesterday', fields: [] },
    });
    assert.deepEqual(
      new Set(types.body.errors.map((e: { path: string }) => e.path)),
      new Set(['body.external_id', 'body.person_id', 'body.display_ts', 'body.fields']),
    );
    const malformed = await req(recordsPath(), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"external_id": "x",',
    });
    assert.deepEqual([malformed.status, malformed.body.errorCode], [400, 'malformed_json']);
  });

  it('answers 400, not 500, for what PostgreSQL cannot hold: NUL characters, out-of-range numbers (found by schemathesis)', async () => {
    const nul = await req(recordsPath(), {
      method: 'POST',
      json: { external_id: 'nul\u0000', fields: [{ category: 'metadata', type: 'json', name: 'j', value: { ['k']: 'v\u0000' } }] },
    });
    assert.equal(nul.status, 400);
    assert.deepEqual(nul.body.errors, [
      { path: 'body.external_id', message: 'must not contain the NUL character (U+0000)' },
      { path: 'body.fields.0.value.k', message: 'must not contain the NUL character (U+0000)' },
    ]);
    assert.equal((await req('/v3/rest/people?email=a%00b')).status, 400);
    const hugePerson = await req(recordsPath(), {
      method: 'POST',
      json: { external_id: 'huge', person_id: 2e27, fields: [validFields[0]] },
    });
    assert.deepEqual(hugePerson.body.errors, [{ path: 'body.person_id', message: 'must be <= 9007199254740991' }]);
    assert.equal((await req('/v3/rest/feedback-sources?page=20342086789746489556992')).status, 400);
  });

  it('answers 400 for a value over 10 KB (the value, not its JSON text), and accepts one of exactly 10 KB', async () => {
    const exact = 'x'.repeat(10 * 1024);
    const over = await req(recordsPath(), {
      method: 'POST',
      json: { external_id: 'big', fields: [{ category: 'content', type: 'string', name: 'body', value: `${exact}x` }] },
    });
    assert.equal(over.status, 400);
    assert.deepEqual(over.body.errors, [{ path: 'body.fields.0.value', message: 'must be at most 10240 bytes (got 10241)' }]);
    const under = await req(recordsPath(), {
      method: 'POST',
      json: { external_id: 'big', fields: [{ category: 'content', type: 'string', name: 'body', value: exact }] },
    });
    assert.equal(under.status, 201);
  });

  it("answers 404 for an unknown source, another organization's source, and another organization's person", async () => {
    const body = { external_id: 'nf', fields: [validFields[0]] };
    const unknown = await req('/v3/rest/feedback-sources/999999/records', { method: 'POST', json: body });
    assert.deepEqual([unknown.status, unknown.body.errorCode, unknown.body.resource], [404, 'not_found', 'Feedback source']);
    const crossSource = await f.as(f.other.apiKey)(recordsPath(), { method: 'POST', json: body });
    assert.deepEqual(crossSource.body, unknown.body);
    const crossPerson = await req(recordsPath(), { method: 'POST', json: { ...body, person_id: otherPersonId } });
    const unknownPerson = await req(recordsPath(), { method: 'POST', json: { ...body, person_id: 987654 } });
    assert.equal(crossPerson.status, 404);
    assert.deepEqual(crossPerson.body, { message: 'Person not found.', errorCode: 'not_found', resource: 'Person' });
    assert.deepEqual(unknownPerson.body, crossPerson.body);
  });

  it('answers 409 naming the existing record for a duplicate external_id, and writes nothing', async () => {
    const first = await req(recordsPath(), { method: 'POST', json: { external_id: 'dup', fields: [validFields[0]] } });
    const before = await count();
    const again = await req(recordsPath(), { method: 'POST', json: { external_id: 'dup', fields: [validFields[3]] } });
    assert.equal(again.status, 409);
    assert.deepEqual(again.body, {
      message: "A record with external_id 'dup' already exists in this source.",
      errorCode: 'duplicate_external_id',
      id: first.body.id,
    });
    assert.equal(await count(), before);
    const stored = await req(`${recordsPath()}/${first.body.id}`);
    assert.deepEqual(stored.body.fields, [validFields[0]]);
    const otherSource = (await req('/v3/rest/feedback-sources', { method: 'POST', json: { name: 'Survey', type: 'api' } })).body.id;
    const elsewhere = await req(`/v3/rest/feedback-sources/${otherSource}/records`, {
      method: 'POST',
      json: { external_id: 'dup', fields: [validFields[0]] },
    });
    assert.equal(elsewhere.status, 201, 'external_id is unique within its source only');
  });

  it('gives exactly one 201 when 20 duplicates race, and 409 with the same id to the rest', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        req(recordsPath(), { method: 'POST', json: { external_id: 'race', fields: [{ ...validFields[3]!, value: i }] } }),
      ),
    );
    const created = results.filter((r) => r.status === 201);
    const conflicts = results.filter((r) => r.status === 409);
    assert.equal(created.length, 1);
    assert.equal(conflicts.length, 19);
    assert.ok(conflicts.every((r) => r.body.id === created[0]!.body.id));
    assert.equal(await f.pool.oneFirst(sql.unsafe`SELECT count(*)::int FROM feedback_records WHERE external_id = 'race'`), 1);
  });

  it('lists records by external_id and pages; hides records of other sources and organizations', async () => {
    const byExternal = await req(`${recordsPath()}?external_id=ticket-1`);
    assert.equal(byExternal.status, 200);
    assert.deepEqual(
      byExternal.body.records.map((r: { external_id: string }) => r.external_id),
      ['ticket-1'],
    );
    const paged = await req(`${recordsPath()}?limit=2&page=1`);
    assert.deepEqual([paged.body.records.length, paged.body.has_more], [2, true]);
    const id = byExternal.body.records[0].id;
    assert.equal((await f.as(f.other.apiKey)(`${recordsPath()}/${id}`)).status, 404);
    const wrongSource = (await req('/v3/rest/feedback-sources', { method: 'POST', json: { name: 'Other', type: 'api' } })).body.id;
    const mismatch = await req(`/v3/rest/feedback-sources/${wrongSource}/records/${id}`);
    assert.deepEqual([mismatch.status, mismatch.body.resource], [404, 'Feedback record']);
  });
});
