import { strict as assert } from 'node:assert';
import { sql, type DatabasePool } from 'slonik';
import { createApplication } from '../../../src/agents/applications.js';
import { createDatabasePool } from '../../../src/db/pool.js';
import { countErasurePlace } from '../../../src/db/repositories/person-erasures.js';
import { exportOrganization } from '../../../src/lifecycle/export.js';
import { erasePerson, erasePersonIn } from '../../../src/people/erasure.js';
import { testConfig } from '../../../harness/config.js';
import { createTestOrg } from '../../../harness/fixtures.js';
import { createTestDatabase, quietLogger } from '../../../harness/stack.js';

/**
 * A person's erasure reads the rows under a session a batch of the organization's sessions at a
 * time (migration 0035, decision 0212): the key of agent_events' place is a session id now. An
 * erasure resumed across that upgrade still holds an event id as its place's key: the place starts
 * again, and nothing is changed or counted twice. The export reads events the same way.
 */
describe('organization keysets: erasure and export read rows under sessions by batches of sessions', () => {
  let pool: DatabasePool;
  before(async () => {
    pool = await createDatabasePool(await createTestDatabase(), { poolSize: 2 });
  });
  after(async () => pool.end());

  it('scrubs the events of every session in batches of sessions (a key of the place from before the upgrade starts it again); the export reads every event once at any batch size', async () => {
    const email = 'ada.keysets@example.com';
    const { organizationId } = await createTestOrg(pool);
    const other = await createTestOrg(pool);
    const app = await createApplication(pool, { organizationId, name: 'a', agentKey: 'a' });
    const otherApp = await createApplication(pool, { organizationId: other.organizationId, name: 'a', agentKey: 'a' });
    const sessions = async (org: string, appId: string, n: number) => {
      for (let i = 0; i < n; i++) {
        await pool.query(sql.unsafe`
          WITH s AS (INSERT INTO agent_sessions (organization_id, application_id, external_session_id) VALUES (${org}, ${appId}, ${`chat-${i}`}) RETURNING id)
          INSERT INTO agent_events (session_id, external_event_id, sequence, revision, type, occurred_at, content_hash, payload)
          SELECT s.id, 'e' || q, q, 1, 'user_message', now(), '\\x00', jsonb_build_object('content', ${`write to ${email} please, message `} || q)
          FROM s, generate_series(0, 2) q`);
      }
    };
    await sessions(organizationId, app.id, 5);
    await sessions(other.organizationId, otherApp.id, 2);
    const personUuid = await pool.oneFirst(
      sql.unsafe`INSERT INTO people (organization_id, email) VALUES (${organizationId}, ${email}) RETURNING uuid`,
    );

    const erasure = await erasePerson(
      { pool, temporal: null, config: testConfig(), logger: quietLogger },
      organizationId,
      String(personUuid),
      'test',
    );
    const subject = { organizationId, personId: erasure.person_id, email };
    assert.equal(await countErasurePlace(pool, 'agent_events', subject), 15, 'the preview counts through the sessions');

    // A place's key from before the upgrade (an event id): the place starts again from the first session.
    const keys: string[] = [];
    const changed = await erasePersonIn(pool, erasure.id, 'agent_events', {
      after: '987654',
      batch: 2,
      progress: (after) => keys.push(after),
    });
    assert.equal(changed, 15, 'every event of the 5 sessions, once');
    assert.equal(keys.length, 2, 'batches of 2 sessions: 2 full batches, then the last');
    for (const key of keys) assert.match(key, /^[0-9a-f-]{36}$/, 'the key is a session id');
    assert.equal(await countErasurePlace(pool, 'agent_events', subject), 0);
    assert.equal(
      await erasePersonIn(pool, erasure.id, 'agent_events', { after: null, progress: () => undefined }),
      0,
      'again: nothing left',
    );
    const untouched =
      await pool.oneFirst(sql.unsafe`SELECT count(*)::int AS n FROM agent_events e JOIN agent_sessions s ON s.id = e.session_id
      WHERE s.organization_id = ${other.organizationId} AND position(${email} in e.payload::text) > 0`);
    assert.equal(untouched, 6, "another organization's events are not touched");

    // The export reads the same way: every event once, each session's in sequence order, at any batch
    // size, sessions without events among them (they never end a batch early).
    for (let i = 0; i < 6; i++) {
      await pool.query(
        sql.unsafe`INSERT INTO agent_sessions (organization_id, application_id, external_session_id) VALUES (${organizationId}, ${app.id}, ${`empty-${i}`})`,
      );
    }
    const exported = async (batch?: number) => {
      const lines: string[] = [];
      await exportOrganization(pool, organizationId, async (chunk) => void lines.push(chunk), batch ? { batch } : {});
      return lines
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => l.type !== 'export');
    };
    const small = await exported(2);
    const events = small.filter((l) => l.type === 'agent_event');
    assert.equal(events.length, 15);
    assert.deepEqual(
      events.map((e) => `${String(e.sessionId)}/${String(e.sequence)}`),
      [...events.map((e) => `${String(e.sessionId)}/${String(e.sequence)}`)].sort(),
      'session order, then sequence order (sequences here are 0-2)',
    );
    assert.equal(new Set(events.map((e) => `${String(e.sessionId)}/${String(e.sequence)}`)).size, 15);
    assert.deepEqual(small, await exported(), 'the same lines as with the default batch');
  });
});
