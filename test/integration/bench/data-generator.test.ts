import { strict as assert } from 'node:assert';
import pg from 'pg';
import { contentHash } from '../../../src/domain/agent-events.js';
import type { JsonObject } from '../../../src/domain/agent-ingest.js';
import { createTestDatabase } from '../../../harness/stack.js';
import { generateData } from '../../../bench/data-generator.js';

/**
 * The data generator writes with triggers and foreign-key checks off (session_replication_role):
 * what they would have enforced is checked here, on a small size, and after a second run on top.
 */
describe('data generator (bench/data-generator.ts)', () => {
  let url: string;
  let db: pg.Client;
  before(async () => {
    url = await createTestDatabase();
    db = new pg.Client({ connectionString: url });
    await db.connect();
  });
  after(async () => db.end());

  const count = async (table: string) => Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)).rows[0]!.n);

  it('writes what it reports, with every foreign key and the sessions, events and sync positions consistent; a second run adds to the first', async () => {
    const first = await generateData(url, { events: 6_000, organizations: 4, seed: 1 });
    const second = await generateData(url, { events: 4_000, organizations: 3, seed: 2 });
    for (const table of Object.keys(first.counts)) {
      assert.equal(await count(table), first.counts[table]! + second.counts[table]!, table);
    }
    assert.equal(first.counts.agent_events, 6_000);
    assert.equal(second.counts.agent_events, 4_000);
    assert.ok(first.counts.recordings! > 0 && first.counts.transcript_utterances! > 0 && first.counts.agent_signals! > 0);
    assert.equal(first.organizations.length, 4);
    assert.ok(first.organizations[0]!.share > first.organizations[3]!.share, 'skewed: the first organization is the largest');

    // Every foreign key holds: re-adding each validates it against every row (rolled back).
    const { rows: fks } = await db.query<{ table: string; name: string; def: string }>(
      `SELECT conrelid::regclass::text AS table, conname AS name, pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE contype = 'f' AND conparentid = 0`,
    );
    assert.ok(fks.length > 20);
    await db.query('BEGIN');
    try {
      for (const fk of fks) {
        await db.query(`ALTER TABLE ${fk.table} DROP CONSTRAINT ${fk.name}, ADD CONSTRAINT ${fk.name} ${fk.def}`);
      }
    } finally {
      await db.query('ROLLBACK');
    }

    // Rows that name an event by id (no foreign key since decision 0216) name one of their own session.
    for (const table of ['agent_event_revisions', 'agent_analysis_jobs', 'agent_signals', 'usage_records']) {
      const { rows: orphans } = await db.query(
        `SELECT x.id FROM ${table} x WHERE x.event_id IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM agent_events e WHERE e.session_id = x.session_id AND e.id = x.event_id) LIMIT 1`,
      );
      assert.deepEqual(orphans, [], table);
    }
    // The organization on every event-level row is its session's.
    for (const table of ['agent_events', 'agent_event_revisions', 'agent_analysis_jobs', 'agent_participants']) {
      const { rows: strays } = await db.query(
        `SELECT x.session_id FROM ${table} x JOIN agent_sessions s ON s.id = x.session_id WHERE x.organization_id IS DISTINCT FROM s.organization_id LIMIT 1`,
      );
      assert.deepEqual(strays, [], table);
    }
    // A session's counters say what its events are; its watermark is at its highest sequence.
    const { rows: wrong } = await db.query(
      `SELECT s.id FROM agent_sessions s LEFT JOIN LATERAL (SELECT count(*)::int AS n, max(sequence) AS top FROM agent_events e WHERE e.session_id = s.id) e ON true
       WHERE s.event_count <> e.n OR s.highest_sequence <> e.top OR s.processed_through_sequence <> s.highest_sequence`,
    );
    assert.deepEqual(wrong, []);
    // An event's hash is its payload's, as the ingest computes it.
    const { rows: sample } = await db.query<{ payload: JsonObject; hash: Buffer }>(
      'SELECT payload, content_hash AS hash FROM agent_events ORDER BY id LIMIT 50',
    );
    for (const row of sample) assert.equal(row.hash.toString('hex'), contentHash(row.payload));

    // Sync positions are unique and the sequences are past every id written: the next rows the service writes do not collide.
    const { rows: dupes } = await db.query(
      `SELECT change_seq FROM (SELECT change_seq FROM agent_sessions UNION ALL SELECT change_seq FROM agent_signals UNION ALL SELECT change_seq FROM recordings) x
       GROUP BY change_seq HAVING count(*) > 1`,
    );
    assert.deepEqual(dupes, []);
    const { rows: seq } = await db.query<{ past: boolean }>(
      `SELECT nextval('sync_change_seq') > (SELECT max(change_seq) FROM agent_sessions)
          AND nextval('agent_events_id_seq') > (SELECT max(id) FROM agent_events)
          AND nextval('usage_records_id_seq') > (SELECT max(id) FROM usage_records)
          AND nextval('people_id_seq') > (SELECT max(id) FROM people) AS past`,
    );
    assert.equal(seq[0]!.past, true);
    // Domain events only within the default retention (30 days), as the sweep leaves them.
    const { rows: old } = await db.query(`SELECT id FROM domain_events WHERE recorded_at < now() - interval '30 days'`);
    assert.deepEqual(old, []);
  });
});
