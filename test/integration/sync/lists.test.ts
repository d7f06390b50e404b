import { strict as assert } from 'node:assert';
import { sql } from 'slonik';
import { agentContext, sessionRequest, userMessage, type AgentContext, type TestAgentApp } from '../../../harness/agents.js';
import { createTestOrg, createTestUser, type TestOrg } from '../../../harness/fixtures.js';
import { encodeCursor } from '../../../src/domain/sync-cursor.js';
import { BEGINNING, insertSignal, RECORDINGS, SESSIONS, SIGNALS, syncAll, syncPage, type SyncList } from './helpers.js';

/** Incremental sync on the three lists over HTTP: keyset pages, resuming, updatedSince, updates, errors, isolation. */
describe('incremental sync: signals, sessions and recordings lists', function () {
  this.timeout(120_000);
  let t: AgentContext;
  let app: TestAgentApp;
  let other: TestOrg;
  let otherApp: TestAgentApp;
  const sessions: string[] = [];
  const signals: string[] = [];
  const recordings: string[] = [];

  const ingest = async (a: TestAgentApp, externalSessionId: string, events = [userMessage(1, 'hello')]) => {
    const res = await t.ingest(a, sessionRequest(a, events, { externalSessionId }));
    assert.equal(res.status, 202, JSON.stringify(res.body));
    return res.body.sessionId as string;
  };
  const createRecording = async (apiKey: string, name: string) => {
    const res = await t.api.request('/v3/rest/recordings', {
      method: 'POST',
      headers: { 'X-Service-Api-Key': apiKey },
      json: { name, record: { externalId: `${name}-${Date.now()}`, values: [] } },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.id as string;
  };
  const idsOf = (list: SyncList, items: Record<string, unknown>[]) => items.map((i) => i[list.id] as string);

  before(async () => {
    t = await agentContext();
    app = await t.newApp();
    other = await createTestOrg(t.pool);
    otherApp = await t.newApp(undefined, other);
    for (let i = 0; i < 5; i++) sessions.push(await ingest(app, `sync-${i}`));
    for (const [i, s] of sessions.entries()) signals.push(await insertSignal(t.pool, t.org.organizationId, s, `signal ${i}`));
    for (let i = 0; i < 5; i++) recordings.push(await createRecording(t.org.apiKey, `Recording ${i}`));
    // Another organization's rows, interleaved in time: never in this organization's pages.
    const foreign = await ingest(otherApp, 'foreign');
    await insertSignal(t.pool, other.organizationId, foreign, 'foreign');
    await createRecording(other.apiKey, 'Foreign');
  });
  after(async () => t?.close());

  const cases: [SyncList, () => string[]][] = [
    [SIGNALS, () => signals],
    [SESSIONS, () => sessions],
    [RECORDINGS, () => recordings],
  ];

  for (const [list, written] of cases) {
    describe(list.path, () => {
      it('pages in change order with a nextCursor on every page; has_more false when caught up; only this organization', async () => {
        const first = await syncPage(t.api, t.org.apiKey, list, { updatedSince: BEGINNING }, { limit: 2 });
        assert.equal(first.status, 200);
        assert.deepEqual(Object.keys(first.body).sort(), [list.key, 'has_more', 'limit', 'nextCursor', 'page'].sort());
        assert.deepEqual([first.body.page, first.body.limit, first.hasMore], [1, 2, true]);
        assert.equal(typeof first.nextCursor, 'string');
        const all = await syncAll(t.api, t.org.apiKey, list, { updatedSince: BEGINNING }, { limit: 2 });
        assert.deepEqual(idsOf(list, all.items), written(), 'creation order is change order');
        assert.equal(all.pages, 3);
        // Caught up: the resumed cursor answers an empty page and a cursor to keep.
        const again = await syncPage(t.api, t.org.apiKey, list, all.cursor, { limit: 2 });
        assert.deepEqual([again.status, again.items, again.hasMore, typeof again.nextCursor], [200, [], false, 'string']);
      });

      it('offset paging is unchanged when no sync parameter is sent, with nextCursor null', async () => {
        const res = await t.api.request(`${list.path}?limit=2&page=2`, { headers: { 'X-Service-Api-Key': t.org.apiKey } });
        assert.equal(res.status, 200);
        assert.deepEqual([res.body.page, res.body.limit, res.body.has_more, res.body.nextCursor], [2, 2, true, null]);
        assert.equal(res.body[list.key].length, 2);
      });

      it('400 invalid_cursor for an altered cursor or one of another list; 400 validation_failed for page or updatedSince with a cursor', async () => {
        const good = (await syncPage(t.api, t.org.apiKey, list, { updatedSince: BEGINNING }, { limit: 1 })).nextCursor;
        const foreignList = list === SIGNALS ? 'recordings' : 'signals';
        for (const cursor of [`${good}x`, 'garbage', encodeCursor(foreignList, { xid: '1', seq: '1' })]) {
          const res = await syncPage(t.api, t.org.apiKey, list, cursor);
          assert.equal(res.status, 400, cursor);
          assert.deepEqual(res.body, {
            message: 'The cursor is not one this list returned: send nextCursor unchanged, to the list that returned it.',
            errorCode: 'invalid_cursor',
          });
        }
        const withPage = await syncPage(t.api, t.org.apiKey, list, good, { extra: 'page=1' });
        assert.equal(withPage.status, 400);
        assert.equal(withPage.body.errorCode, 'validation_failed');
        assert.deepEqual(withPage.body.errors, [{ path: 'query.page', message: 'must not be combined with cursor or updatedSince' }]);
        const both = await syncPage(t.api, t.org.apiKey, list, good, { extra: `updatedSince=${BEGINNING}` });
        assert.deepEqual(
          [both.status, both.body.errorCode, both.body.errors],
          [400, 'validation_failed', [{ path: 'query.updatedSince', message: 'must not be combined with cursor' }]],
        );
        const empty = await t.api.request(`${list.path}?cursor=`, { headers: { 'X-Service-Api-Key': t.org.apiKey } });
        assert.deepEqual([empty.status, empty.body.errorCode], [400, 'validation_failed']);
        const badTime = await t.api.request(`${list.path}?updatedSince=yesterday`, { headers: { 'X-Service-Api-Key': t.org.apiKey } });
        assert.deepEqual([badTime.status, badTime.body.errorCode], [400, 'validation_failed']);
      });
    });
  }

  describe('changes and filters', () => {
    it('a cursor carries no organization: another organization following it sees only its own rows', async () => {
      const mine = await syncAll(t.api, t.org.apiKey, SESSIONS, { updatedSince: BEGINNING });
      const theirs = await syncAll(t.api, other.apiKey, SESSIONS, { updatedSince: BEGINNING });
      assert.equal(theirs.items.length, 1);
      assert.equal(theirs.items[0]!.externalSessionId, 'foreign');
      const resumed = await syncPage(t.api, other.apiKey, SESSIONS, mine.cursor);
      assert.equal(resumed.status, 200);
      assert.ok(resumed.items.every((s) => !sessions.includes(s.sessionId as string)));
    });

    it('an update moves a row after the cursor: a resumed sync sees the new version, once', async () => {
      const caughtUp = await syncAll(t.api, t.org.apiKey, SESSIONS, { updatedSince: BEGINNING });
      // A second ingest into sessions[1] changes what the API shows (event count, updatedAt).
      await ingest(app, 'sync-1', [userMessage(1, 'hello'), userMessage(2, 'again')]);
      const resumed = await syncAll(t.api, t.org.apiKey, SESSIONS, caughtUp.cursor);
      assert.deepEqual(idsOf(SESSIONS, resumed.items), [sessions[1]]);
      assert.equal(resumed.items[0]!.eventCount, 2);
      // From the start, the moved session now comes last, once.
      const fromStart = await syncAll(t.api, t.org.apiKey, SESSIONS, { updatedSince: BEGINNING });
      assert.deepEqual(idsOf(SESSIONS, fromStart.items), [sessions[0], sessions[2], sessions[3], sessions[4], sessions[1]]);
    });

    it('an update of a column the API does not show (the wake protocol) does not move a session', async () => {
      const caughtUp = await syncAll(t.api, t.org.apiKey, SESSIONS, { updatedSince: BEGINNING });
      await t.pool.query(
        sql.unsafe`UPDATE agent_sessions SET workflow_signalled_at = now(), wake_requested_at = NULL WHERE id = ${sessions[3]!}`,
      );
      const resumed = await syncAll(t.api, t.org.apiKey, SESSIONS, caughtUp.cursor);
      assert.deepEqual(resumed.items, []);
    });

    it('a recording whose status changes moves; a signal too', async () => {
      const r = await syncAll(t.api, t.org.apiKey, RECORDINGS, { updatedSince: BEGINNING });
      const g = await syncAll(t.api, t.org.apiKey, SIGNALS, { updatedSince: BEGINNING });
      await t.pool.query(
        sql.unsafe`UPDATE recordings SET transcript_status = 'unavailable', updated_at = now() WHERE id = ${recordings[0]!}`,
      );
      await t.pool.query(sql.unsafe`UPDATE agent_signals SET summary = 'edited' WHERE id = ${signals[2]!}`);
      assert.deepEqual(idsOf(RECORDINGS, (await syncAll(t.api, t.org.apiKey, RECORDINGS, r.cursor)).items), [recordings[0]]);
      const moved = (await syncAll(t.api, t.org.apiKey, SIGNALS, g.cursor)).items;
      assert.deepEqual(
        moved.map((s) => [s.id, s.summary]),
        [[signals[2], 'edited']],
      );
    });

    it('updatedSince starts with the rows changed at or after it; the filters of the list apply in keyset mode', async () => {
      const before = new Date().toISOString();
      const late = await ingest(app, 'sync-late');
      const lateSignal = await insertSignal(t.pool, t.org.organizationId, late, 'late');
      assert.deepEqual(idsOf(SESSIONS, (await syncAll(t.api, t.org.apiKey, SESSIONS, { updatedSince: before })).items), [late]);
      assert.deepEqual(idsOf(SIGNALS, (await syncAll(t.api, t.org.apiKey, SIGNALS, { updatedSince: before })).items), [lateSignal]);
      const future = await syncAll(t.api, t.org.apiKey, SESSIONS, { updatedSince: '2999-01-01T00:00:00Z' });
      assert.deepEqual(future.items, []);
      // Filters: another application's sessions only; signals of one session only.
      const none = await syncAll(t.api, t.org.apiKey, SESSIONS, { updatedSince: BEGINNING }, { extra: `applicationId=${otherApp.app.id}` });
      assert.deepEqual(none.items, []);
      const ofLate = await syncAll(t.api, t.org.apiKey, SIGNALS, { updatedSince: BEGINNING }, { extra: `sessionId=${late}` });
      assert.deepEqual(idsOf(SIGNALS, ofLate.items), [lateSignal]);
    });

    it('conversation access applies: a user sees the restricted sessions only when allowed', async () => {
      const user = await createTestUser(t.pool, t.org.organizationId);
      const restrictedApp = await t.newApp({ conversationAccess: { type: 'users', userIds: [] } });
      const hidden = await ingest(restrictedApp, 'hidden');
      const res = await t.api.request(`${SESSIONS.path}?updatedSince=${BEGINNING}&limit=100`, {
        headers: { Authorization: `Bearer ${user.accessToken}` },
      });
      assert.equal(res.status, 200);
      assert.ok(!(res.body.sessions as { sessionId: string }[]).some((s) => s.sessionId === hidden));
    });
  });
});
