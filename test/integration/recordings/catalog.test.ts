import { strict as assert } from 'node:assert';
import { createTestKey, createTestUser } from '../../../harness/fixtures.js';
import { recordingContext, type RecordingContext } from '../../helpers/recordings.js';
import { runIntake } from '../../helpers/cli.js';
import { TEST_SIGNING_SECRET } from '../../../harness/config.js';

/** Folders and metadata fields: REST (list for readers, create for admins) and the admin CLI. */
describe('recordings: folders and metadata fields', function () {
  this.timeout(90_000);
  let t: RecordingContext;

  before(async () => {
    t = await recordingContext();
  });
  after(async () => t?.close());

  it('creates and lists folders and typed fields; fields live in the api/recordings source', async () => {
    const folder = await t.call('POST', '/v3/rest/folders', { name: ' Sales calls ' });
    assert.equal(folder.status, 201);
    assert.equal(folder.body.name, 'Sales calls');
    const field = await t.call('POST', '/v3/rest/metadata-fields', { name: 'deal_stage', type: 'string' });
    assert.equal(field.status, 201);
    assert.deepEqual([field.body.type, field.body.source.type, field.body.source.externalEntityName], ['string', 'api', 'recordings']);
    const duplicate = await t.call('POST', '/v3/rest/metadata-fields', { name: 'Deal_Stage', type: 'integer' });
    assert.deepEqual([duplicate.status, duplicate.body.errorCode], [409, 'metadata_field_exists']);
    const bad = await t.call('POST', '/v3/rest/metadata-fields', { name: 'x', type: 'money' });
    assert.deepEqual([bad.status, bad.body.errors[0].path], [400, 'body.type']);
    const folders = await t.call('GET', '/v3/rest/folders');
    assert.deepEqual(
      folders.body.folders.map((f: { folderId: string }) => f.folderId),
      [folder.body.folderId],
    );
    const fields = await t.call('GET', '/v3/rest/metadata-fields');
    assert.deepEqual(
      fields.body.fields.map((f: { fieldId: string }) => f.fieldId),
      [field.body.fieldId],
    );
    const used = await t.call('POST', '/v3/rest/recordings', {
      record: { externalId: 'uses-catalog', values: [{ fieldId: field.body.fieldId, value: 'won' }] },
      folderIds: [folder.body.folderId],
    });
    assert.equal(used.status, 201);
    const foreign = await t.call('GET', '/v3/rest/folders', undefined, { 'X-Service-Api-Key': t.other.apiKey });
    assert.deepEqual(foreign.body.folders, []);
  });

  it('create needs admin (403 for members and narrow keys); listing needs recordings:read', async () => {
    const member = await createTestUser(t.pool, t.org.organizationId, 'member');
    const asMember = { Authorization: `Bearer ${member.accessToken}` };
    assert.equal((await t.call('POST', '/v3/rest/folders', { name: 'No' }, asMember)).status, 403);
    assert.equal((await t.call('GET', '/v3/rest/folders', undefined, asMember)).status, 200);
    const narrow = await createTestKey(t.pool, t.org.organizationId, ['feedback:write']);
    assert.equal((await t.call('GET', '/v3/rest/metadata-fields', undefined, { 'X-Service-Api-Key': narrow.apiKey })).status, 403);
    assert.equal((await t.call('POST', '/v3/rest/metadata-fields', { name: 'y', type: 'json' }, {})).status, 401);
  });

  it('intake folder create and metadata-field create', async () => {
    const env = { DATABASE_URL: t.databaseUrl, SIGNING_SECRET: TEST_SIGNING_SECRET, LOG_LEVEL: 'silent' };
    const folder = await runIntake(env, 'folder', 'create', '--org', t.org.organizationId, '--name', 'Board meetings');
    assert.equal(folder.code, 0, folder.stderr);
    assert.deepEqual(Object.keys(folder.json).sort(), ['folderId', 'name']);
    const field = await runIntake(env, 'metadata-field', 'create', '--org', t.org.organizationId, '--name', 'region', '--type', 'string');
    assert.deepEqual({ ...field.json, fieldId: undefined }, { fieldId: undefined, name: 'region', type: 'string' });
    const bad = await runIntake(env, 'metadata-field', 'create', '--org', t.org.organizationId, '--name', 'r', '--type', 'money');
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--type must be one of/);
    const missing = await runIntake(env, 'folder', 'create', '--org', '00000000-0000-4000-8000-000000000000', '--name', 'x');
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /organization .* not found/);
    const listed = await t.call('GET', '/v3/rest/folders?limit=100');
    assert.ok(listed.body.folders.some((f: { folderId: string }) => f.folderId === folder.json.folderId));
  });
});
