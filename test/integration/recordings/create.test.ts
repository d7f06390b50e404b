import { strict as assert } from 'node:assert';
import { sql } from 'slonik';
import { z } from 'zod';
import { upsertPerson } from '../../../src/db/repositories/people.js';
import { createTestKey } from '../../../harness/fixtures.js';
import { recordingContext, uniqueExternalId, utterances, type RecordingContext } from '../../helpers/recordings.js';

const count = (t: RecordingContext, table: 'recordings' | 'metadata_records' | 'people' | 'transcript_utterances' | 'recording_folders') =>
  t.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM ${sql.identifier([table])}`);

/** POST /v3/rest/recordings: the spec's create-recording table, status by status. */
describe('recordings: create', function () {
  this.timeout(120_000);
  let t: RecordingContext;

  before(async () => {
    t = await recordingContext();
  });
  after(async () => t?.close());

  const create = (body: unknown, headers?: Record<string, string>) => t.call('POST', '/v3/rest/recordings', body, headers);

  /** Asserts the status, and that nothing at all was written. */
  async function refused(body: unknown, status: number) {
    const before = await Promise.all([
      count(t, 'recordings'),
      count(t, 'metadata_records'),
      count(t, 'people'),
      count(t, 'transcript_utterances'),
    ]);
    const res = await create(body);
    assert.equal(res.status, status, JSON.stringify(res.body));
    assert.equal(typeof res.body.message, 'string');
    assert.deepEqual(
      await Promise.all([count(t, 'recordings'), count(t, 'metadata_records'), count(t, 'people'), count(t, 'transcript_utterances')]),
      before,
    );
    return res.body;
  }
  const paths = (body: { errors?: { path: string }[] }) => (body.errors ?? []).map((e) => e.path);

  it('201 with only a record: Location, defaults, asset waiting without url, canonical record in the api/recordings source', async () => {
    const res = await create({ record: { externalId: '  crm-1  ' } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.headers.get('location'), `/v3/rest/recordings/${res.body.id}`);
    assert.equal(res.body.name, 'Untitled recording');
    assert.deepEqual(res.body.asset, { status: 'waiting', url: null, errorCode: null });
    assert.deepEqual(res.body.transcript, { status: 'waiting', source: null });
    assert.deepEqual(res.body.participants, []);
    assert.equal(res.body.record.externalId, 'crm-1', 'trimmed');
    assert.deepEqual({ ...res.body.record.source, id: undefined }, { id: undefined, type: 'api', externalEntityName: 'recordings' });
    assert.deepEqual(res.body.record.values, []);
    assert.ok(!Number.isNaN(Date.parse(res.body.recordedAt)));
  });

  it('201 with everything: typed values, folders (set semantics), participants by reference and upsert, authoritative transcript', async () => {
    const [text, num, when] = [await t.field('string'), await t.field('integer'), await t.field('datetime')];
    const [f1, f2] = [await t.folder(), await t.folder()];
    const known = await t.pool.transaction((tx) =>
      upsertPerson(tx, { organizationId: t.org.organizationId, email: 'known@example.com', firstName: 'Kim' }),
    );
    const res = await create({
      record: {
        externalId: uniqueExternalId(),
        values: [
          { fieldId: text, value: 'Enterprise' },
          { fieldId: num, value: 42 },
          { fieldId: when, value: '2026-11-01T10:00:00+01:00' },
        ],
      },
      name: 'Discovery call',
      recordedAt: '2026-11-01T09:00:00Z',
      folderIds: [f1, f2, f1.toUpperCase()],
      participants: [
        { speaker: 0, person: { type: 'reference', personId: known.person.uuid } },
        { speaker: 1, person: { type: 'upsert', email: 'New@Example.com', firstName: 'Nia', lastName: 'Ng' } },
      ],
      transcript: {
        utterances: [
          { startSec: 0, endSec: 2.5, speaker: 0, text: 'Hello.' },
          { startSec: 2, endSec: 4, speaker: 1, text: 'Hi!' },
        ],
      },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.name, 'Discovery call');
    assert.equal(res.body.recordedAt, '2026-11-01T09:00:00.000Z');
    assert.deepEqual(res.body.transcript, { status: 'completed', source: 'api' });
    assert.deepEqual(
      res.body.record.values.map((v: { fieldId: string; type: string; value: unknown }) => [v.fieldId, v.type, v.value]),
      [
        [text, 'string', 'Enterprise'],
        [num, 'integer', 42],
        [when, 'datetime', '2026-11-01T10:00:00+01:00'],
      ],
    );
    assert.deepEqual([...res.body.folderIds].sort(), [f1, f2].sort());
    assert.deepEqual(res.body.participants[0], {
      speaker: 0,
      person: { id: known.person.uuid, firstName: 'Kim', lastName: null, email: 'known@example.com' },
    });
    assert.equal(res.body.participants[1].person.email, 'New@Example.com');
    assert.equal(res.body.participants[1].person.firstName, 'Nia');
    const get = await t.call('GET', `/v3/rest/recordings/${res.body.id}`);
    assert.deepEqual(get.body, res.body);
  });

  it('recordedAt: any RFC 3339 offset is stored as its UTC instant; a leap second or year 0000 is 400', async () => {
    const res = await create({ record: { externalId: uniqueExternalId() }, recordedAt: '2026-11-01T23:30:00-21:18' });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.recordedAt, '2026-11-02T20:48:00.000Z');
    for (const recordedAt of ['2026-12-31T23:59:60Z', '0000-01-01T00:00:00Z']) {
      assert.deepEqual(paths(await refused({ record: { externalId: uniqueExternalId() }, recordedAt }, 400)), ['body.recordedAt']);
    }
  });

  it('a valid assetUrl leaves the asset queued (the URL itself is never shown)', async () => {
    const res = await create({ record: { externalId: uniqueExternalId() }, assetUrl: 'https://media.example.com/calls/1.mp4?sig=abc' });
    assert.equal(res.status, 201);
    assert.deepEqual(res.body.asset, { status: 'queued', url: null, errorCode: null });
    assert.ok(!JSON.stringify(res.body).includes('sig=abc'));
  });

  it('400: malformed body, record or externalId missing, unknown property, externalId blank or too long after trimming', async () => {
    const malformed = await t.api.request('/v3/rest/recordings', {
      method: 'POST',
      headers: { 'X-Service-Api-Key': t.org.apiKey, 'content-type': 'application/json' },
      body: '{"record":',
    });
    assert.deepEqual([malformed.status, malformed.body.errorCode], [400, 'malformed_json']);
    assert.deepEqual(paths(await refused({}, 400)), ['body.record']);
    assert.deepEqual(paths(await refused({ record: {} }, 400)), ['body.record.externalId']);
    assert.deepEqual(paths(await refused({ record: { externalId: 'x' }, color: 'red' }, 400)), ['body.color']);
    assert.deepEqual(paths(await refused({ record: { externalId: '   ' } }, 400)), ['body.record.externalId']);
    assert.deepEqual(paths(await refused({ record: { externalId: ` ${'x'.repeat(513)} ` } }, 400)), ['body.record.externalId']);
    assert.equal((await create({ record: { externalId: ` ${'y'.repeat(512)} ` } })).status, 201);
  });

  it('400: limits of name, values, folderIds, participants and assetUrl length; ids must be UUIDs', async () => {
    const id = uniqueExternalId();
    assert.deepEqual(paths(await refused({ record: { externalId: id }, name: '' }, 400)), ['body.name']);
    assert.deepEqual(paths(await refused({ record: { externalId: id }, name: 'n'.repeat(501) }, 400)), ['body.name']);
    const field = await t.field('string');
    const values = Array.from({ length: 501 }, () => ({ fieldId: field, value: 'v' }));
    assert.deepEqual(paths(await refused({ record: { externalId: id, values } }, 400)), ['body.record.values']);
    const folderIds = Array.from({ length: 501 }, () => '00000000-0000-4000-8000-000000000000');
    assert.deepEqual(paths(await refused({ record: { externalId: id }, folderIds }, 400)), ['body.folderIds']);
    const participants = Array.from({ length: 101 }, (_, i) => ({ speaker: i, person: { type: 'upsert', email: `p${i}@example.com` } }));
    assert.deepEqual(paths(await refused({ record: { externalId: id }, participants }, 400)), ['body.participants']);
    assert.deepEqual(paths(await refused({ record: { externalId: id }, assetUrl: `https://example.com/${'a'.repeat(4080)}` }, 400)), [
      'body.assetUrl',
    ]);
    assert.ok(paths(await refused({ record: { externalId: id }, folderIds: ['12345'] }, 400)).includes('body.folderIds.0'));
    assert.ok(paths(await refused({ record: { externalId: id }, recordedAt: '2026-11-01 10:00' }, 400)).includes('body.recordedAt'));
  });

  it('400: a metadata field repeated', async () => {
    const field = await t.field('string');
    const body = await refused(
      {
        record: {
          externalId: uniqueExternalId(),
          values: [
            { fieldId: field, value: 'a' },
            { fieldId: field.toUpperCase(), value: 'b' },
          ],
        },
      },
      400,
    );
    assert.deepEqual(paths(body), ['body.record.values.1.fieldId']);
  });

  it('400: participant assignments conflict (a speaker to several people, a person to several speakers)', async () => {
    const twoPeople = [
      { speaker: 0, person: { type: 'upsert', email: 'a@example.com' } },
      { speaker: 0, person: { type: 'upsert', email: 'b@example.com' } },
    ];
    assert.match(
      (await refused({ record: { externalId: uniqueExternalId() }, participants: twoPeople }, 400)).errors[0].message,
      /speaker 0 is assigned to several people/,
    );
    const known = await t.pool.transaction((tx) => upsertPerson(tx, { organizationId: t.org.organizationId, email: 'same@example.com' }));
    const twoSpeakers = [
      { speaker: 0, person: { type: 'reference', personId: known.person.uuid } },
      { speaker: 1, person: { type: 'upsert', email: 'SAME@example.com' } },
    ];
    assert.match(
      (await refused({ record: { externalId: uniqueExternalId() }, participants: twoSpeakers }, 400)).errors[0].message,
      /several speakers/,
    );
    const bad = { type: 'upsert' };
    assert.ok(
      paths(await refused({ record: { externalId: uniqueExternalId() }, participants: [{ speaker: 0, person: bad }] }, 400)).length > 0,
    );
  });

  it('400: transcript ordering and timing, blank or long text, same-speaker overlap, participant speaker without utterance', async () => {
    const rec = () => ({ externalId: uniqueExternalId() });
    const cases: [unknown[], string][] = [
      [
        [
          { startSec: 5, endSec: 6, speaker: 0, text: 'b' },
          { startSec: 1, endSec: 2, speaker: 1, text: 'a' },
        ],
        'body.transcript.utterances.1.startSec',
      ],
      [[{ startSec: 5, endSec: 4, speaker: 0, text: 'a' }], 'body.transcript.utterances.0.endSec'],
      [[{ startSec: 0, endSec: 1, speaker: 0, text: '   ' }], 'body.transcript.utterances.0.text'],
      [[{ startSec: 0, endSec: 1, speaker: 0, text: 'x'.repeat(20_001) }], 'body.transcript.utterances.0.text'],
      [
        [
          { startSec: 0, endSec: 3, speaker: 0, text: 'a' },
          { startSec: 2, endSec: 4, speaker: 0, text: 'b' },
        ],
        'body.transcript.utterances.1.startSec',
      ],
    ];
    for (const [list, path] of cases) {
      const body = await refused({ record: rec(), transcript: { utterances: list } }, 400);
      assert.ok(paths(body).includes(path), `${path} in ${JSON.stringify(body.errors)}`);
    }
    assert.ok(paths(await refused({ record: rec(), transcript: { utterances: [] } }, 400)).includes('body.transcript.utterances'));
    const missing = await refused(
      {
        record: rec(),
        participants: [{ speaker: 3, person: { type: 'upsert', email: 'q@example.com' } }],
        transcript: { utterances: utterances(2) },
      },
      400,
    );
    assert.match(missing.errors[0].message, /speaker 3 appears in no utterance/);
    const touching = await create({
      record: rec(),
      transcript: {
        utterances: [
          { startSec: 0, endSec: 2, speaker: 0, text: 'a' },
          { startSec: 1, endSec: 3, speaker: 1, text: 'b' },
          { startSec: 2, endSec: 3, speaker: 0, text: 'c' },
        ],
      },
    });
    assert.equal(touching.status, 201, 'other speakers may overlap; a speaker may start where it ended');
  });

  it('400: assetUrl with another scheme, credentials, localhost or a private address in any spelling', async () => {
    for (const assetUrl of [
      'ftp://example.com/a.mp3',
      'https://user:pw@example.com/a.mp3',
      'http://localhost/a',
      'http://10.0.0.5/a',
      'http://2130706433/a',
      'http://0x7f.0.0.1/a',
      'http://[::ffff:127.0.0.1]/a',
      'http://169.254.169.254/latest',
      'not a url',
    ]) {
      const body = await refused({ record: { externalId: uniqueExternalId() }, assetUrl }, 400);
      assert.deepEqual(paths(body), ['body.assetUrl'], assetUrl);
    }
  });

  it('401 without or with invalid credentials; 403 for a key without recordings:write', async () => {
    const none = await create({ record: { externalId: 'x' } }, {});
    assert.deepEqual([none.status, none.body.errorCode], [401, 'unauthenticated']);
    const wrong = await create({ record: { externalId: 'x' } }, { 'X-Service-Api-Key': 'ik_wrong' });
    assert.deepEqual([wrong.status, wrong.body.errorCode], [401, 'invalid_credentials']);
    const readOnly = await createTestKey(t.pool, t.org.organizationId, ['recordings:read']);
    const forbidden = await create({ record: { externalId: 'x' } }, { 'X-Service-Api-Key': readOnly.apiKey });
    assert.deepEqual([forbidden.status, forbidden.body.errorCode], [403, 'insufficient_scope']);
  });

  it('404: unknown or other-organization person, metadata field or folder; nothing is created', async () => {
    const foreignPerson = await t.pool.transaction((tx) =>
      upsertPerson(tx, { organizationId: t.other.organizationId, email: 'far@example.com' }),
    );
    const foreignField = await t.field('string', t.other);
    const foreignFolder = await t.folder(t.other);
    const unknown = '00000000-0000-4000-8000-000000000001';
    const cases: [unknown, string][] = [
      [{ participants: [{ speaker: 0, person: { type: 'reference', personId: unknown } }] }, 'Person'],
      [{ participants: [{ speaker: 0, person: { type: 'reference', personId: foreignPerson.person.uuid } }] }, 'Person'],
      [{ values: [{ fieldId: unknown, value: 'x' }] }, 'Metadata field'],
      [{ values: [{ fieldId: foreignField, value: 'x' }] }, 'Metadata field'],
      [{ folderIds: [await t.folder(), unknown] }, 'Folder'],
      [{ folderIds: [foreignFolder] }, 'Folder'],
    ];
    for (const [extra, resource] of cases) {
      const { values, ...rest } = extra as { values?: unknown };
      const body = await refused({ record: { externalId: uniqueExternalId(), ...(values ? { values } : {}) }, ...rest }, 404);
      assert.deepEqual([body.errorCode, body.resource], ['not_found', resource]);
    }
  });

  it('409: an external id already used answers {message: recording-external-id-conflict, recordingId} and writes nothing', async () => {
    const externalId = uniqueExternalId();
    const first = await create({ record: { externalId }, name: 'First' });
    const body = await refused(
      { record: { externalId: ` ${externalId}` }, name: 'Second', transcript: { utterances: utterances(3) } },
      409,
    );
    assert.deepEqual(body, {
      message: 'recording-external-id-conflict',
      errorCode: 'recording_external_id_conflict',
      recordingId: first.body.id,
    });
    assert.equal((await t.call('GET', `/v3/rest/recordings/${first.body.id}`)).body.name, 'First', 'nothing updated');
  });

  it('a failed create reserves nothing: the same external id then succeeds', async () => {
    const externalId = uniqueExternalId();
    await refused(
      {
        record: { externalId },
        folderIds: ['00000000-0000-4000-8000-000000000009'],
        participants: [{ speaker: 0, person: { type: 'upsert', email: 'ghost@example.com' } }],
      },
      404,
    );
    const people = await t.pool.oneFirst(sql.unsafe`SELECT count(*)::int FROM people WHERE email = 'ghost@example.com'`);
    assert.equal(people, 0, 'the upserted person was rolled back');
    assert.equal((await create({ record: { externalId } })).status, 201);
  });

  it('422: a value not matching its field type, and a field of another source, with externalId, fieldId, fieldType, reason', async () => {
    const externalId = uniqueExternalId();
    const integer = await t.field('integer');
    const body = await refused({ record: { externalId, values: [{ fieldId: integer, value: 'forty-two' }] } }, 422);
    assert.deepEqual(
      { ...body, message: undefined, reason: undefined },
      { message: undefined, errorCode: 'invalid_metadata_value', externalId, fieldId: integer, fieldType: 'integer', reason: undefined },
    );
    assert.match(body.reason, /integer/);
    const sourceId = await t.pool.oneFirst(sql.type(z.object({ id: z.string() }))`
      INSERT INTO metadata_sources (organization_id, type, external_entity_name) VALUES (${t.org.organizationId}, 'csv', 'imports') RETURNING id`);
    const elsewhere = await t.pool.oneFirst(sql.type(z.object({ id: z.string() }))`
      INSERT INTO metadata_fields (organization_id, source_id, name, type) VALUES (${t.org.organizationId}, ${sourceId}, 'imported', 'string') RETURNING id`);
    const other = await refused({ record: { externalId, values: [{ fieldId: elsewhere, value: 'x' }] } }, 422);
    assert.deepEqual([other.fieldId, other.fieldType, other.externalId], [elsewhere, 'string', externalId]);
    assert.match(other.reason, /another metadata source/);
  });

  it('413: more than 10,000 utterances, more than 2,000,000 characters', async () => {
    const many = await refused({ record: { externalId: uniqueExternalId() }, transcript: { utterances: utterances(10_001) } }, 413);
    assert.equal(many.errorCode, 'too_many_utterances');
    const long = utterances(101, () => 'w'.repeat(19_803));
    const large = await refused({ record: { externalId: uniqueExternalId() }, transcript: { utterances: long } }, 413);
    assert.equal(large.errorCode, 'transcript_too_large');
  });

  it('413 for an oversized transcript also when the rest of the body is invalid, whichever path parses it (issue 29.6)', async () => {
    // Over BODY_WORKER_THRESHOLD_BYTES: a thread parses it; checked before the schema there too.
    const many = await refused(
      { record: { externalId: uniqueExternalId() }, name: '', transcript: { utterances: utterances(10_001) } },
      413,
    );
    assert.equal(many.errorCode, 'too_many_utterances');
    const onLoop = await recordingContext({ BODY_WORKER_THRESHOLD_BYTES: String(64 * 1024 * 1024) });
    try {
      const res = await onLoop.call('POST', '/v3/rest/recordings', {
        record: { externalId: uniqueExternalId() },
        name: '',
        transcript: { utterances: utterances(10_001) },
      });
      assert.deepEqual([res.status, res.body.errorCode], [413, 'too_many_utterances']);
    } finally {
      await onLoop.close();
    }
  });

  it('a 10,000-utterance transcript is stored in full', async () => {
    const res = await create({ record: { externalId: uniqueExternalId() }, transcript: { utterances: utterances(10_000) } });
    assert.equal(res.status, 201);
    const stored = await t.pool.oneFirst(
      sql.unsafe`SELECT count(*)::int FROM transcript_utterances WHERE recording_id = ${res.body.id as string}`,
    );
    assert.equal(stored, 10_000);
  });

  it('many creates racing for one external id: exactly one 201, the others 409 naming it', async () => {
    const externalId = uniqueExternalId();
    const responses = await Promise.all(Array.from({ length: 12 }, (_, i) => create({ record: { externalId }, name: `Racer ${i}` })));
    const created = responses.filter((r) => r.status === 201);
    assert.equal(created.length, 1, JSON.stringify(responses.map((r) => r.status)));
    for (const r of responses.filter((x) => x.status !== 201)) {
      assert.equal(r.status, 409);
      assert.equal(r.body.recordingId, created[0]?.body.id);
    }
    const rows = await t.pool.oneFirst(sql.unsafe`SELECT count(*)::int FROM metadata_records WHERE external_id = ${externalId}`);
    assert.equal(rows, 1);
  });
});

describe('recordings: body past the configured maximum', function () {
  this.timeout(60_000);
  let t: RecordingContext;
  before(async () => {
    t = await recordingContext({ RECORDING_BODY_LIMIT_BYTES: '50000' });
  });
  after(async () => t?.close());

  it('413 recording_payload_too_large', async () => {
    const res = await t.call('POST', '/v3/rest/recordings', {
      record: { externalId: 'big' },
      transcript: { utterances: utterances(2, () => 'z'.repeat(30_000)) },
    });
    assert.equal(res.status, 413);
    assert.equal(res.body.errorCode, 'recording_payload_too_large');
  });
});
