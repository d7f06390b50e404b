/**
 * Partition migration (decision 0216): `npm run bench -- partition-migration --size M` measures
 * migrations 0036-0039 and the partition maintainer's first run on a database of a 0.1 deployment's
 * shape at that size, with writes going on, as a rolling upgrade runs them.
 *
 * - A database migrated to 0035 (the last migration before 0.2's partitioning) is filled to the size
 *   by the data generator (bench/data-generator.ts; the columns 0035 lacks are left out).
 * - Writers (WRITERS, closed loop) insert single events in 0.1's statement (no organization: the
 *   trigger fills it after 0036) into sessions of their own, throughout.
 * - Phases, each timed: `before` (BASELINE_MS of writes alone: the limit, same run and settings),
 *   `migration` (0036-0039 through the migration runner, as the API's start applies them),
 *   `maintainer` (extendEventPartitions' first run: the legacy ids read, the validation's scan of the
 *   legacy rows, the attaches), `after` (BASELINE_MS more of the same writes), `afterNew` (BASELINE_MS
 *   of this version's insert, the organization written, into new sessions: the week's partition).
 * - Reported: each phase's seconds, the writers' inserts a second and latency (p50, p99, max) in it,
 *   the maintainer's steps, the legacy ids kept, and the database's size.
 *
 * BENCH_GROWTH_EVENTS_SCALE (default 1) scales the size down for a quick check, as for growth.
 */
import { copyFile, mkdtemp, readdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { extendEventPartitions } from '../src/agents/event-partitions.js';
import { migrate } from '../src/db/migrate.js';
import { createDatabasePool } from '../src/db/pool.js';
import { MIGRATIONS_DIR } from '../src/paths.js';
import { createEmptyDatabase, stopTestStack } from '../harness/stack.js';
import { databaseSize, generateData, SIZES, type SizeName } from './data-generator.js';
import { installQuietRuntime } from './runtime.js';
import { percentile } from './stats.js';

const WRITERS = 4;
const BASELINE_MS = 15_000;
const SCALE = Number(process.env.BENCH_GROWTH_EVENTS_SCALE ?? 1);
const PHASES = ['before', 'migration', 'maintainer', 'after', 'afterNew'] as const;
type Phase = (typeof PHASES)[number];

const progress = (message: string) => process.stderr.write(`[partition-migration] ${new Date().toISOString()} ${message}\n`);
const round = (value: number, digits = 3) => Number(value.toFixed(digits));

export async function benchPartitionMigration(o: { size: SizeName }): Promise<Record<string, unknown>> {
  installQuietRuntime();
  const url = await createEmptyDatabase();
  const before0036 = await mkdtemp(path.join(os.tmpdir(), 'intake-migrations-0035-'));
  for (const name of await readdir(MIGRATIONS_DIR))
    if (name < '0036') await copyFile(path.join(MIGRATIONS_DIR, name), path.join(before0036, name));
  await migrate(url, before0036);
  const size = SIZES[o.size];
  const events = Math.round(size.events * SCALE);
  progress(`generating ${events} events (0035's schema)`);
  const generatedAt = performance.now();
  const generated = await generateData(url, {
    events,
    organizations: Math.max(4, Math.round(size.organizations * SCALE)),
    seed: 1,
    progress,
  });
  const generateSeconds = (performance.now() - generatedAt) / 1000;

  const raw = new pg.Pool({ connectionString: url, max: WRITERS + 1 });
  raw.on('error', () => undefined);
  const pool = await createDatabasePool(url, { poolSize: 2 });
  try {
    const { rows: apps } = await raw.query<{ organization_id: string; id: string }>(
      'SELECT organization_id, id FROM agent_applications ORDER BY created_at LIMIT 1',
    );
    const sessions: string[] = [];
    for (let i = 0; i < WRITERS; i++) {
      const { rows } = await raw.query<{ id: string }>(
        'INSERT INTO agent_sessions (organization_id, application_id, external_session_id) VALUES ($1, $2, $3) RETURNING id',
        [apps[0]!.organization_id, apps[0]!.id, `partition-migration-${i}`],
      );
      sessions.push(rows[0]!.id);
    }

    // The writers: 0.1's event insert, closed loop, each call's latency kept under the phase it started in.
    let phase: Phase = 'before';
    let stop = false;
    const latencies: Record<Phase, number[]> = { before: [], migration: [], maintainer: [], after: [], afterNew: [] };
    const failures: string[] = [];
    // From `afterNew` on, this version's insert instead (the organization written) into new sessions
    // (UUIDv7 ids, so the week's partition): what the writers pay once the upgrade is done.
    const fresh: string[] = [];
    const writers = sessions.map(async (legacySession, w) => {
      for (let sequence = 1; !stop; sequence++) {
        const at = phase;
        const t = performance.now();
        try {
          if (at === 'afterNew')
            await raw.query(
              `INSERT INTO agent_events (session_id, organization_id, external_event_id, sequence, revision, type, occurred_at, final, content_hash, payload)
               VALUES ($1, $4, $2, $3, 1, 'user_message', now(), NULL, '\\x00', '{"content": "after the upgrade"}')`,
              [fresh[w], `e${sequence}`, sequence, apps[0]!.organization_id],
            );
          else
            await raw.query(
              `INSERT INTO agent_events (session_id, external_event_id, sequence, revision, type, occurred_at, final, content_hash, payload)
               VALUES ($1, $2, $3, 1, 'user_message', now(), NULL, '\\x00', '{"content": "during the upgrade"}')`,
              [legacySession, `e${sequence}`, sequence],
            );
        } catch (error) {
          if (failures.length < 10) failures.push(`${at}: ${(error as Error).message}`);
        }
        latencies[at].push(performance.now() - t);
      }
    });
    const seconds: Partial<Record<Phase, number>> = {};
    const timed = async (name: Phase, run: () => Promise<unknown>) => {
      phase = name;
      progress(name);
      const t = performance.now();
      const result = await run();
      seconds[name] = round((performance.now() - t) / 1000);
      return result;
    };
    const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

    await timed('before', () => wait(BASELINE_MS));
    const { rows: legacy } = await raw.query<{ n: string }>('SELECT count(*) AS n FROM agent_events');
    const migration = await timed('migration', () => migrate(url));
    const maintainer = await timed('maintainer', () => extendEventPartitions(pool));
    await timed('after', () => wait(BASELINE_MS));
    for (let i = 0; i < WRITERS; i++) {
      const { rows } = await raw.query<{ id: string }>(
        'INSERT INTO agent_sessions (organization_id, application_id, external_session_id) VALUES ($1, $2, $3) RETURNING id',
        [apps[0]!.organization_id, apps[0]!.id, `partition-migration-new-${i}`],
      );
      fresh.push(rows[0]!.id);
    }
    await timed('afterNew', () => wait(BASELINE_MS));
    stop = true;
    await Promise.all(writers);

    const writes = Object.fromEntries(
      PHASES.map((p) => {
        const sorted = [...latencies[p]].sort((a, b) => a - b);
        return [
          p,
          {
            inserts: sorted.length,
            perSecond: round(sorted.length / (seconds[p] ?? 1), 1),
            latencyMs: { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: percentile(sorted, 100) },
          },
        ];
      }),
    );
    return {
      size: o.size,
      scale: SCALE,
      events,
      legacyRows: Number(legacy[0]!.n),
      generateSeconds: round(generateSeconds, 1),
      database: await databaseSize(url),
      writers: WRITERS,
      seconds,
      migration,
      maintainer,
      writes,
      // The writers' stall: the longest insert while each step ran, against the longest before it.
      stallMs: {
        before: writes.before!.latencyMs.max,
        migration: writes.migration!.latencyMs.max,
        maintainer: writes.maintainer!.latencyMs.max,
      },
      failures,
      generatedRows: generated.counts,
    };
  } finally {
    await pool.end();
    await raw.end();
    await stopTestStack();
  }
}
