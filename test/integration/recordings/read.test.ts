import { strict as assert } from 'node:assert';
import { createTestKey, createTestUser } from '../../../harness/fixtures.js';
import { recordingContext, uniqueExternalId, type RecordingContext } from '../../helpers/recordings.js';

/** GET recording, list (paging and recorded_at filters) and transcript (utterances, monologues). */
describe('recordings: get, list, transcript', function () {
  this.timeout(60_000);
  let t: RecordingContext;
  let id: string;
  const days = ['2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z', '2026-01-03T00:00:00Z', '2026-01-04T00:00:00Z', '2026-01-05T00:00:00Z'];

  before(async () => {
    t = await recordingContext();
    const field = await t.field('boolean');
    for (const [i, recordedAt] of days.entries()) {
      const res = await t.call('POST', '/v3/rest/recordings', {
        record: { externalId: `day-${i}`, values: [{ fieldId: field, value: i % 2 === 0 }] },
        name: `Day ${i}`,
        recordedAt,
        transcript: {
          utterances: [
            { startSec: 0, endSec: 1, speaker: 0, text: 'Hello.' },
            { startSec: 1, endSec: 2, speaker: 0, text: 'Are you there?' },
            { startSec: 2, endSec: 3, speaker: 1, text: 'Yes.' },
            { startSec: 3, endSec: 5, speaker: 0, text: 'Good.' },
          ],
        },
      });
      assert.equal(res.status, 201);
      id = res.body.id;
    }
  });
  after(async () => t?.close());

  it('GET a recording: 200 with the resource; 404 for unknown, other organization and non-UUID ids', async () => {
    const res = await t.call('GET', `/v3/rest/recordings/${id}`);
    assert.equal(res.status, 200);
    assert.equal(res.body.name, 'Day 4');
    for (const path of ['/v3/rest/recordings/00000000-0000-4000-8000-000000000000', '/v3/rest/recordings/12345']) {
      const missing = await t.call('GET', path);
      assert.deepEqual([missing.status, missing.body.errorCode, missing.body.resource], [404, 'not_found', 'Recording']);
    }
    const foreign = await t.call('GET', `/v3/rest/recordings/${id}`, undefined, { 'X-Service-Api-Key': t.other.apiKey });
    assert.equal(foreign.status, 404);
  });

  it('401 without credentials, 403 without recordings:read; a user token reads too', async () => {
    assert.equal((await t.call('GET', `/v3/rest/recordings/${id}`, undefined, {})).status, 401);
    const key = await createTestKey(t.pool, t.org.organizationId, ['feedback:write']);
    const res = await t.call('GET', '/v3/rest/recordings', undefined, { 'X-Service-Api-Key': key.apiKey });
    assert.deepEqual([res.status, res.body.errorCode], [403, 'insufficient_scope']);
    const user = await createTestUser(t.pool, t.org.organizationId);
    assert.equal(
      (await t.call('GET', `/v3/rest/recordings/${id}/transcript`, undefined, { Authorization: `Bearer ${user.accessToken}` })).status,
      200,
    );
  });

  it('lists newest recorded first with snake_case items and the canonical record under metadata; pages with has_more', async () => {
    const first = await t.call('GET', '/v3/rest/recordings?limit=2');
    assert.equal(first.status, 200);
    assert.deepEqual([first.body.page, first.body.limit, first.body.has_more], [1, 2, true]);
    assert.deepEqual(
      first.body.recordings.map((r: { display_name: string }) => r.display_name),
      ['Day 4', 'Day 3'],
    );
    const item = first.body.recordings[0];
    assert.deepEqual(Object.keys(item).sort(), ['created_at', 'display_name', 'id', 'metadata', 'recorded_at', 'source', 'updated_at']);
    assert.equal(item.source, 'api');
    assert.equal(item.recorded_at, '2026-01-05T00:00:00.000Z');
    assert.deepEqual(item.metadata[0].source, { type: 'api', external_entity_name: 'recordings' });
    assert.equal(item.metadata[0].record.external_id, 'day-4');
    assert.equal(item.metadata[0].record.fields[0].value, true);
    const last = await t.call('GET', '/v3/rest/recordings?limit=2&page=3');
    assert.deepEqual([last.body.recordings.length, last.body.has_more], [1, false]);
    const other = await t.call('GET', '/v3/rest/recordings', undefined, { 'X-Service-Api-Key': t.other.apiKey });
    assert.deepEqual(other.body.recordings, []);
  });

  it('filters by recorded_at: gt and lt are strict, gte and lte inclusive', async () => {
    const names = async (query: string) =>
      (await t.call('GET', `/v3/rest/recordings?${query}`)).body.recordings.map((r: { display_name: string }) => r.display_name);
    assert.deepEqual(await names(`recorded_at_gt=${days[2]}`), ['Day 4', 'Day 3']);
    assert.deepEqual(await names(`recorded_at_gte=${days[2]}`), ['Day 4', 'Day 3', 'Day 2']);
    assert.deepEqual(await names(`recorded_at_lt=${days[1]}`), ['Day 0']);
    assert.deepEqual(await names(`recorded_at_lte=${days[1]}&recorded_at_gte=${days[1]}`), ['Day 1']);
    assert.deepEqual(await names(`recorded_at_gt=${encodeURIComponent('2026-01-02T01:00:00+02:00')}`), [
      'Day 4',
      'Day 3',
      'Day 2',
      'Day 1',
    ]);
    // RFC 3339 allows offsets PostgreSQL does not (past ±15:59): normalized to UTC, not a 500.
    assert.deepEqual(await names(`recorded_at_gte=${encodeURIComponent('2026-01-03T21:00:00-21:00')}`), ['Day 4']);
  });

  it('400 on bad list parameters', async () => {
    for (const query of [
      'limit=0',
      'limit=101',
      'page=0',
      'page=x',
      'recorded_at_gt=yesterday',
      'recorded_at_lt=2026-01-01',
      'sort=name',
    ]) {
      const res = await t.call('GET', `/v3/rest/recordings?${query}`);
      assert.equal(res.status, 400, query);
      assert.equal(res.body.errorCode, 'validation_failed');
    }
  });

  it('transcript as utterances (default) and as monologues (contiguous same-speaker rows merged)', async () => {
    const utterance = await t.call('GET', `/v3/rest/recordings/${id}/transcript`);
    assert.equal(utterance.status, 200);
    assert.equal(utterance.body.type, 'utterance');
    assert.equal(utterance.body.recordingId, id);
    assert.deepEqual(utterance.body.utterances[0], { recordingId: id, startSec: 0, endSec: 1, speaker: 0, text: 'Hello.' });
    assert.equal(utterance.body.utterances.length, 4);
    const monologue = await t.call('GET', `/v3/rest/recordings/${id}/transcript?type=monologue`);
    assert.deepEqual(monologue.body, {
      type: 'monologue',
      recordingId: id,
      monologues: [
        { recordingId: id, startSec: 0, endSec: 2, speaker: 0, text: 'Hello. Are you there?' },
        { recordingId: id, startSec: 2, endSec: 3, speaker: 1, text: 'Yes.' },
        { recordingId: id, startSec: 3, endSec: 5, speaker: 0, text: 'Good.' },
      ],
    });
    const explicit = await t.call('GET', `/v3/rest/recordings/${id}/transcript?type=utterance`);
    assert.deepEqual(explicit.body, utterance.body);
  });

  it('transcript: 400 for an unsupported type, 404 for unknown or other-organization recordings, empty without one', async () => {
    const bad = await t.call('GET', `/v3/rest/recordings/${id}/transcript?type=paragraph`);
    assert.deepEqual([bad.status, bad.body.errorCode], [400, 'validation_failed']);
    assert.equal((await t.call('GET', '/v3/rest/recordings/00000000-0000-4000-8000-000000000000/transcript')).status, 404);
    assert.equal(
      (await t.call('GET', `/v3/rest/recordings/${id}/transcript`, undefined, { 'X-Service-Api-Key': t.other.apiKey })).status,
      404,
    );
    const bare = await t.call('POST', '/v3/rest/recordings', { record: { externalId: uniqueExternalId() } });
    const empty = await t.call('GET', `/v3/rest/recordings/${bare.body.id}/transcript`);
    assert.deepEqual(empty.body, { type: 'utterance', recordingId: bare.body.id, utterances: [] });
  });
});
