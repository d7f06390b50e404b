import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { agentContext, sessionRequest, userMessage, type AgentContext } from '../../../harness/agents.js';
import { recordingContext, type RecordingContext } from '../../helpers/recordings.js';

/**
 * Input that passed the schemas and then failed in PostgreSQL (a 500): `urn:uuid:` ids, which
 * ajv-formats' `uuid` accepts, and date-times whose UTC instant lies past year 9999. Each is a 400
 * with `validation_failed` naming the field now (issue 29.5).
 */
describe('validated input never reaches the database as a 500', function () {
  this.timeout(60_000);
  const urn = () => `urn:uuid:${randomUUID()}`;
  const PAST_9999 = '9999-12-31T23:59:59-23:59';

  describe('agent ingest and applications', () => {
    let t: AgentContext;
    before(async () => {
      t = await agentContext();
    });
    after(async () => t?.close());

    it('refuses urn:uuid: participant ids and a time past year 9999 with 400', async () => {
      const app = await t.newApp();
      const person = await t.ingest(
        app,
        sessionRequest(app, [userMessage(1, 'x')], { participants: [{ externalId: 'u', personId: urn() }] }),
      );
      assert.deepEqual(
        [person.status, person.body.errorCode, person.body.errors?.[0]?.path],
        [400, 'validation_failed', 'body.participants.0.personId'],
      );
      const owner = await t.ingest(
        app,
        sessionRequest(app, [userMessage(1, 'x')], { participants: [{ externalId: 'u', ownerUserId: urn() }] }),
      );
      assert.deepEqual([owner.status, owner.body.errors?.[0]?.path], [400, 'body.participants.0.ownerUserId']);
      const late = await t.ingest(app, sessionRequest(app, [userMessage(1, 'x', { occurredAt: PAST_9999 })]));
      assert.deepEqual([late.status, late.body.errors?.[0]?.path], [400, 'body.events.0.occurredAt']);
    });

    it('refuses urn:uuid: in list filters and in conversationAccess.userIds with 400', async () => {
      const headers = { 'X-Service-Api-Key': t.org.apiKey };
      const list = await t.api.request(`/v3/rest/agent-conversations/sessions?applicationId=${encodeURIComponent(urn())}`, { headers });
      assert.deepEqual([list.status, list.body.errorCode], [400, 'validation_failed']);
      const signals = await t.api.request(`/v3/rest/signals?sessionId=${encodeURIComponent(urn())}`, { headers });
      assert.deepEqual([signals.status, signals.body.errorCode], [400, 'validation_failed']);
      const app = await t.newApp();
      const patch = await t.api.request(`/v3/rest/agent-applications/${app.app.id}`, {
        method: 'PATCH',
        headers,
        json: { conversationAccess: { type: 'users', userIds: [urn()] } },
      });
      assert.deepEqual(
        [patch.status, patch.body.errorCode, patch.body.errors?.[0]?.path],
        [400, 'validation_failed', 'body.conversationAccess.userIds'],
      );
    });
  });

  describe('recordings', () => {
    let t: RecordingContext;
    before(async () => {
      t = await recordingContext();
    });
    after(async () => t?.close());

    it('refuses urn:uuid: folder ids and times past year 9999 with 400', async () => {
      const folders = await t.call('POST', '/v3/rest/recordings', { record: { externalId: 'urn-folders' }, folderIds: [urn()] });
      assert.deepEqual(
        [folders.status, folders.body.errorCode, folders.body.errors?.[0]?.path],
        [400, 'validation_failed', 'body.folderIds.0'],
      );
      const late = await t.call('POST', '/v3/rest/recordings', { record: { externalId: 'late' }, recordedAt: PAST_9999 });
      assert.deepEqual([late.status, late.body.errors?.[0]?.path], [400, 'body.recordedAt']);
      const filter = await t.call('GET', `/v3/rest/recordings?recorded_at_gt=${encodeURIComponent(PAST_9999)}`);
      assert.deepEqual([filter.status, filter.body.errorCode], [400, 'validation_failed']);
    });
  });
});
