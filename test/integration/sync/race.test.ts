import { strict as assert } from 'node:assert';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { agentContext, type AgentContext, type TestAgentApp } from '../../../harness/agents.js';
import { BEGINNING, SESSIONS, SIGNALS, syncAll, syncPage, type SyncList } from './helpers.js';

/**
 * The guarantee of incremental sync on real PostgreSQL: transactions take their positions before
 * they commit and commit out of order, some stay open while others commit, and a reader that
 * follows cursors meanwhile still sees every committed row in its final version (decision 0179).
 */
describe('incremental sync under concurrent writers', function () {
  this.timeout(180_000);
  let t: AgentContext;
  let app: TestAgentApp;
  const clients: pg.Client[] = [];

  const connect = async () => {
    const c = new pg.Client({ connectionString: t.databaseUrl });
    await c.connect();
    clients.push(c);
    return c;
  };
  const insertSession = async (c: pg.Client, externalId: string) => {
    const { rows } = await c.query<{ id: string; xid: string; seq: string }>(
      `INSERT INTO agent_sessions (organization_id, application_id, external_session_id) VALUES ($1, $2, $3)
       RETURNING id, change_xid::text AS xid, change_seq::text AS seq`,
      [t.org.organizationId, app.app.id, externalId],
    );
    return rows[0]!;
  };
  const insertSignal = async (c: pg.Client, sessionId: string) => {
    const { rows } = await c.query<{ id: string }>(
      `INSERT INTO agent_signals (organization_id, session_id, event_external_id, source, kind) VALUES ($1, $2, 'e1', 'qualitative_inference', 'topic')
       RETURNING id`,
      [t.org.organizationId, sessionId],
    );
    return rows[0]!.id;
  };
  const caughtUp = async (list: SyncList = SESSIONS) =>
    (await syncAll(t.api, t.org.apiKey, list, { updatedSince: BEGINNING }, { limit: 100 })).cursor;

  before(async () => {
    t = await agentContext();
    app = await t.newApp();
  });
  after(async () => {
    for (const c of clients) await c.end().catch(() => undefined);
    await t?.close();
  });

  it('the trap: a lower sequence value commits after a higher one; keyset on positions waits for it instead of skipping it', async () => {
    const cursor = await caughtUp();
    const [slow, fast] = [await connect(), await connect()];
    await slow.query('BEGIN');
    const a = await insertSession(slow, 'trap-a');
    await fast.query('BEGIN');
    const b = await insertSession(fast, 'trap-b');
    await fast.query('COMMIT');
    // The hazard is real: B took a higher sequence value and committed first; a reader paging by
    // sequence alone now reads B, moves past it, and never sees A once A commits.
    assert.ok(BigInt(b.seq) > BigInt(a.seq) && BigInt(b.xid) > BigInt(a.xid));
    const naive = await fast.query<{ id: string }>(
      'SELECT id FROM agent_sessions WHERE organization_id = $1 AND change_seq >= $2 ORDER BY change_seq',
      [t.org.organizationId, a.seq],
    );
    assert.deepEqual(
      naive.rows.map((r) => r.id),
      [b.id],
    );
    // Keyset on (xid, seq) below the snapshot's xmin: nothing yet (A's transaction holds the horizon).
    const waiting = await syncPage(t.api, t.org.apiKey, SESSIONS, cursor);
    assert.deepEqual([waiting.items, waiting.hasMore], [[], false]);
    await slow.query('COMMIT');
    const after = await syncAll(t.api, t.org.apiKey, SESSIONS, waiting.nextCursor);
    assert.deepEqual(
      after.items.map((s) => s.sessionId),
      [a.id, b.id],
    );
  });

  it('the horizon is cluster-wide: a transaction open in another database holds back changes committed after it began, until it ends', async () => {
    const cursor = await caughtUp();
    const elsewhere = new URL(t.databaseUrl);
    elsewhere.pathname = '/postgres';
    const other = new pg.Client({ connectionString: elsewhere.toString() });
    await other.connect();
    clients.push(other);
    await other.query('BEGIN');
    await other.query('SELECT pg_current_xact_id()'); // an id, as any writing transaction has
    const writer = await connect();
    const row = await insertSession(writer, 'after-long-transaction');
    const held = await syncPage(t.api, t.org.apiKey, SESSIONS, cursor);
    assert.deepEqual([held.items, held.hasMore], [[], false]);
    await other.query('COMMIT');
    const released = await syncAll(t.api, t.org.apiKey, SESSIONS, held.nextCursor);
    assert.deepEqual(
      released.items.map((s) => s.sessionId),
      [row.id],
    );
  });

  it('inserts: writers committing out of order, some held open, some rolled back; readers following cursors see every committed row', async () => {
    const cursors = { sessions: await caughtUp(SESSIONS), signals: await caughtUp(SIGNALS) };
    const committed = new Set<string>();
    const rolledBack = new Set<string>();
    const committedSignals = new Set<string>();
    const rolledBackSignals = new Set<string>();
    const commitOrder: bigint[] = [];
    let done = false;
    const writer = async (w: number) => {
      const c = await connect();
      for (let round = 0; round < 15; round++) {
        await c.query('BEGIN');
        const rows = [];
        const signals = [];
        for (let i = 0; i < 1 + ((w + round) % 3); i++) {
          rows.push(await insertSession(c, `w${w}-r${round}-${i}`));
          signals.push(await insertSignal(c, rows.at(-1)!.id));
        }
        // Every fourth transaction stays open long enough for others to commit past it.
        await sleep((w + round) % 4 === 0 ? 150 : Math.floor(Math.random() * 30));
        if ((w * 7 + round) % 10 === 0) {
          await c.query('ROLLBACK');
          for (const r of rows) rolledBack.add(r.id);
          for (const g of signals) rolledBackSignals.add(g);
        } else {
          await c.query('COMMIT');
          commitOrder.push(BigInt(rows[0]!.xid));
          for (const r of rows) committed.add(r.id);
          for (const g of signals) committedSignals.add(g);
        }
      }
    };
    const seen = new Set<string>();
    const seenSignals = new Set<string>();
    let seenWhileWriting = 0;
    const reader = async (list: SyncList, start: string, into: Set<string>) => {
      let next = start;
      while (!done) {
        const page = await syncPage(t.api, t.org.apiKey, list, next, { limit: 4 });
        assert.equal(page.status, 200);
        for (const item of page.items) into.add(item[list.id] as string);
        seenWhileWriting = seen.size;
        next = page.nextCursor;
        if (!page.hasMore) await sleep(5);
      }
      for (const item of (await syncAll(t.api, t.org.apiKey, list, next, { limit: 4 })).items) into.add(item[list.id] as string);
    };
    const readers = Promise.all([reader(SESSIONS, cursors.sessions, seen), reader(SIGNALS, cursors.signals, seenSignals)]);
    await Promise.all(Array.from({ length: 6 }, (_, w) => writer(w)));
    done = true;
    await readers;

    // The run did exercise the trap: transactions committed in another order than their ids.
    const inversions = commitOrder.filter((x, i) => commitOrder.slice(i + 1).some((later) => later < x)).length;
    assert.ok(inversions > 0, 'no out-of-order commits happened');
    assert.ok(seenWhileWriting > 0, 'the reader read nothing while writers wrote');
    assert.deepEqual(
      [...committed].filter((id) => !seen.has(id)),
      [],
      'committed rows the reader missed',
    );
    assert.deepEqual(
      [...seen].filter((id) => rolledBack.has(id)),
      [],
      'rolled back rows the reader saw',
    );
    assert.equal(seen.size, committed.size);
    assert.deepEqual(
      [...committedSignals].filter((id) => !seenSignals.has(id)),
      [],
      'committed signals the reader missed',
    );
    assert.deepEqual(
      [...seenSignals].filter((id) => rolledBackSignals.has(id)),
      [],
    );
    assert.equal(seenSignals.size, committedSignals.size);
  });

  it('updates: every session seen in its final version, versions seen in increasing order', async () => {
    const setup = await connect();
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push((await insertSession(setup, `upd-${i}`)).id);
    const cursor = await caughtUp();
    let done = false;
    const writer = async (w: number) => {
      const c = await connect();
      for (let round = 0; round < 20; round++) {
        // One or two sessions, locked in id order: writers never deadlock.
        const pick = [...new Set([ids[(w * 5 + round) % ids.length]!, ids[(w + round * 3) % ids.length]!])].sort();
        await c.query('BEGIN');
        await c.query('UPDATE agent_sessions SET event_count = event_count + 1, updated_at = now() WHERE id = ANY($1::uuid[])', [pick]);
        await sleep((w + round) % 5 === 0 ? 120 : Math.floor(Math.random() * 20));
        await c.query((w + round) % 9 === 0 ? 'ROLLBACK' : 'COMMIT');
      }
    };
    const lastSeen = new Map<string, number>();
    const reader = async () => {
      let next = cursor;
      while (!done) {
        const page = await syncPage(t.api, t.org.apiKey, SESSIONS, next, { limit: 3 });
        for (const s of page.items) {
          const id = s.sessionId as string;
          const count = s.eventCount as number;
          assert.ok(count >= (lastSeen.get(id) ?? 0), `session ${id} went back from ${lastSeen.get(id)} to ${count}`);
          lastSeen.set(id, count);
        }
        next = page.nextCursor;
        if (!page.hasMore) await sleep(5);
      }
      return next;
    };
    const readerRun = reader();
    await Promise.all(Array.from({ length: 5 }, (_, w) => writer(w)));
    done = true;
    const last = await readerRun;
    for (const s of (await syncAll(t.api, t.org.apiKey, SESSIONS, last, { limit: 3 })).items) {
      lastSeen.set(s.sessionId as string, s.eventCount as number);
    }
    const { rows } = await setup.query<{ id: string; event_count: number }>(
      'SELECT id, event_count FROM agent_sessions WHERE id = ANY($1::uuid[])',
      [ids],
    );
    const final = new Map(rows.map((r) => [r.id, r.event_count]));
    const changed = ids.filter((id) => final.get(id)! > 0);
    assert.ok(changed.length > 10);
    assert.deepEqual(
      changed.map((id) => [id, lastSeen.get(id)]),
      changed.map((id) => [id, final.get(id)]),
    );
  });
});
