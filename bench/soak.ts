/**
 * Soak: `npm run bench -- soak [--minutes N]` (120 by default; CI runs `--minutes 10`). The fleet of
 * production processes (harness/fleet.ts: PostgreSQL with fsync on, the production Temporal server
 * on it, two API replicas and two workers from the build, with docker-compose.yml's environment)
 * takes a mixed load (bench/mixed-load.ts: agent sessions one event a request, feedback records,
 * recordings with transcripts, webhooks to a receiver, sessions, records and recordings deleted once
 * checked) at half of its capacity, measured first in the same run, for the set time, while faults
 * come on a schedule, one kind after another: a worker killed with SIGKILL (another started in its
 * place), PostgreSQL restarted (a fast shutdown: every connection closed), the Temporal server
 * restarted, an API replica killed (the load balancer, here the load's client, routes around it; it
 * comes back 30 s later).
 *
 * It reports:
 *  - what was lost or counted twice: events accepted but not stored or not processed, answers
 *    charged other than once (usage records and credits against the answers accepted), domain
 *    events without a delivery the receiver got, feedback records and recordings stored twice;
 *  - the processing lag (a probe: one event a second into a quiet session, from its POST until the
 *    session's watermark passes it), and after each fault how long until the lag is under 2 s again
 *    and stays there for STABLE_SECONDS (goal: RECOVERY_GOAL_SECONDS);
 *  - every process's memory (RSS; PostgreSQL's summed PSS) and the database's size every
 *    SAMPLE_SECONDS, and their growth after the warm-up (the first fifth): flat is at most
 *    FLAT_GOAL_PERCENT between the first and the second half of what follows it, for the processes
 *    that ran through it and the tables whose live rows the load keeps steady; the tables that keep
 *    a record of the work (usage, credits, domain events, deliveries, idempotency keys) grow with it,
 *    and their bytes per event are reported instead. Flatness is judged (a failure past the goal) on
 *    runs of FLAT_JUDGED_FROM_MINUTES or more; a shorter run (CI's) reports it;
 *  - webhook latency (domain event to the receiver, an HTTPS server here with a certificate the
 *    fleet trusts, as production delivers only over TLS) p50/p95 and by the minute of the event;
 *    a delivery later than WEBHOOK_GOAL_SECONDS is a failure (a stalled sender, decision 0218).
 *
 * A run whose checks find anything lost, counted twice or missing lists it in `failures`, and
 * `npm run bench` exits non-zero after writing the result.
 */
import type pg from 'pg';
import { Connection, WorkflowClient } from '@temporalio/client';
import { sleep } from '../src/dev/net.js';
import { webhookEndpointWorkflowId } from '../workflows/webhook-endpoint/contract.js';
import { isRunning } from '../harness/fleet.js';
import {
  measureCapacity,
  probeLag,
  RAISED_RATE_LIMITS,
  startLoadFleet,
  untilDeliveriesMade,
  workerDrainingSession,
  type Probe as SentProbe,
} from './load-fleet.js';
import { TABLE_BYTES } from './data-generator.js';
import { MixedLoad, type Tenant } from './mixed-load.js';
import { percentile, postgresMemoryMiB, postmasterPid, processMemoryMiB } from './stats.js';

const TENANTS = 4;
const CAPACITY_SECONDS = 30;
const CAPACITY_CONCURRENCY = 32;
const LOAD_SHARE = 0.5;
const SAMPLE_SECONDS = 10;
const PROBE_SECONDS = 1;
const LAG_UNDER_SECONDS = 2;
const RECOVERY_GOAL_SECONDS = 60;
/** No delivery arrives later than this after its event, faults included (a sender's recovery takes well under it). */
const WEBHOOK_GOAL_SECONDS = 120;
/** A recovery holds for this long: the lag stays under LAG_UNDER_SECONDS. */
const STABLE_SECONDS = 30;
const FLAT_GOAL_PERCENT = 10;
/** Flatness is judged on runs this long or longer: a shorter one's window is GC and autovacuum noise (it is reported, not judged). */
const FLAT_JUDGED_FROM_MINUTES = 60;
const API_BACK_AFTER_MS = 30_000;
const SETTLE_TIMEOUT_MS = 5 * 60_000;
const FAULTS = ['worker-sigkill', 'postgres-restart', 'temporal-restart', 'api-drop'] as const;
type FaultKind = (typeof FAULTS)[number];

/** Tables whose live rows the load keeps steady (it deletes what it checked); a partitioned one counts its partitions. */
const STEADY_TABLES = [
  'agent_sessions',
  'agent_events',
  'agent_event_revisions',
  'agent_analysis_jobs',
  'agent_signals',
  'agent_participants',
  'recordings',
  'transcript_utterances',
  'recording_participants',
  'feedback_records',
  'people',
];
/** Tables that keep a record of the work, and grow with it. */
const RECORD_TABLES = [
  'usage_records',
  'credit_transactions',
  'domain_events',
  'webhook_deliveries',
  'webhook_delivery_attempts',
  'idempotency_keys',
  'recording_deletions',
];

const progress = (message: string) => process.stderr.write(`[soak] ${new Date().toISOString()} ${message}\n`);
const round = (value: number, digits = 1) => Number(value.toFixed(digits));

interface Sample {
  seconds: number;
  memoryMiB: Record<string, number>;
  databaseMiB: { intake: number; temporal: number; steady: number; records: number };
  events: number;
  /** The slowest probe of the last SAMPLE_SECONDS. */
  lagMaxSeconds: number;
  /**
   * The Temporal server's connections to its database (pg_stat_activity): running a statement, idle
   * inside a transaction, waiting on a lock, and the oldest open transaction's age: a stalled history
   * shard whose writes wait on PostgreSQL shows here.
   */
  temporalDb: { active: number; idleInTransaction: number; waitingOnLocks: number; oldestTransactionSeconds: number } | null;
  /** Deliveries the receiver has had so far, and each endpoint's queue and sender: where a stalled delivery waits. */
  webhooks: { received: number; endpoints: EndpointSample[] };
}

/** One endpoint at one sample: its deliveries (webhook_deliveries) and its sender workflow (Temporal's describe). */
interface EndpointSample {
  pending: number;
  /** Pending and due now. */
  due: number;
  /** Due, and first of its subject (what a look can take). */
  takeable: number;
  /** Pending with at least one failed attempt, and the latest error. */
  retrying: number;
  lastError: string | null;
  oldestDueSeconds: number | null;
  /** The sender workflow's status and its pending call (attempt, state, seconds since it started and since its last heartbeat). */
  sender: {
    status: string | null;
    /** Events in the workflow's current run's history: signals and workflow tasks grow it, continue-as-new resets it. */
    historyLength: number;
    call: {
      state: string;
      attempt: number;
      startedSecondsAgo: number | null;
      heartbeatSecondsAgo: number | null;
      lastFailure: string | null;
    } | null;
  } | null;
}

interface Probe {
  /** Seconds into the soak when the probe was sent. */
  at: number;
  lagSeconds: number;
}

interface FaultRecord {
  kind: FaultKind;
  at: number;
  /** How long the fault itself took: the kill and the replacement's start, or the restart. */
  tookSeconds: number;
  /** From the fault until a probe sent after it was processed in under LAG_UNDER_SECONDS. */
  recoverySeconds: number | null;
  maxLagSeconds: number;
}

/** Growth in percent from the first half's mean to the second half's (null: too few values). */
function growthPercent(values: number[]): number | null {
  if (values.length < 4) return null;
  const half = Math.floor(values.length / 2);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const first = mean(values.slice(0, half));
  return first > 0 ? round((100 * (mean(values.slice(half)) - first)) / first) : null;
}

export async function benchSoak(o: { minutes: number }): Promise<Record<string, unknown>> {
  progress('starting the fleet');
  // The soak measures what survives faults, not the limits (the noisy-tenant benchmark does).
  const bench = await startLoadFleet({ name: 'soak', extraEnv: RAISED_RATE_LIMITS });
  const { fleet, raw, receiver, apiUrls, replicas } = bench;
  let workerCount = fleet.procs.filter((p) => p.role === 'worker').length;
  const started = Date.now();
  const at = () => (Date.now() - started) / 1000;
  let running = false;
  try {
    const tenants: Tenant[] = [];
    for (let i = 0; i < TENANTS; i++) tenants.push(await bench.newTenant());
    const load = new MixedLoad(replicas, tenants, raw);
    const query = async <R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[] | null> =>
      raw.query<R>(text, values).then(
        (r) => r.rows,
        () => null,
      );

    // Capacity: the same mix, closed loop, then until all of it is processed.
    progress(`capacity: ${CAPACITY_SECONDS} s closed loop at concurrency ${CAPACITY_CONCURRENCY}`);
    const capacity = await measureCapacity(load, fleet, {
      seconds: CAPACITY_SECONDS,
      concurrency: CAPACITY_CONCURRENCY,
      settleTimeoutMs: SETTLE_TIMEOUT_MS,
    });
    const rate = LOAD_SHARE * capacity.eventsPerSecond;
    progress(
      `capacity ${Math.round(capacity.eventsPerSecond)} events/s (${capacity.events} events in ${capacity.seconds} s); soaking at ${Math.round(rate)} events/s for ${o.minutes} min`,
    );

    // The soak.
    const soakStart = Date.now();
    const soakAt = () => (Date.now() - soakStart) / 1000;
    const soakSeconds = o.minutes * 60;
    const until = soakStart + soakSeconds * 1000;
    const eventsAtSoakStart = load.counts.events;
    const samples: Sample[] = [];
    const faults: FaultRecord[] = [];
    running = true;

    // The probe: its own session in the first tenant, one event a second.
    const sent: SentProbe[] = [];
    const probeSession: { id?: string } = {};
    const prober = probeLag(load, raw, tenants[0]!, {
      everyMs: PROBE_SECONDS * 1000,
      running: () => running,
      probes: sent,
      session: probeSession,
    });
    const probesNow = (): Probe[] => sent.map((p) => ({ at: round((p.sentAt - soakStart) / 1000, 2), lagSeconds: p.lagSeconds }));

    const senders = await sendersProbe(fleet.cluster.address, fleet.cluster.namespace);
    const endpointIds = tenants.map((t) => t.endpointId);
    const sampler = (async () => {
      while (running) {
        const memoryMiB: Record<string, number> = {};
        for (const proc of fleet.procs.filter(isRunning)) {
          const m = await processMemoryMiB(proc.child.pid);
          if (m) memoryMiB[proc.name] = round(m.rss);
        }
        const temporal = await processMemoryMiB(fleet.cluster.pid);
        if (temporal) memoryMiB['temporal-server'] = round(temporal.rss);
        const postmaster = await postmasterPid(fleet.postgres.dataDir).catch(() => null);
        if (postmaster) memoryMiB.postgres = round(await postgresMemoryMiB(postmaster));
        const sizes = await query<{ intake: string; temporal: string; steady: string; records: string }>(
          `SELECT pg_database_size('intake') AS intake, pg_database_size('temporal') AS temporal,
                  (SELECT sum(${TABLE_BYTES('t::regclass')}) FROM unnest($1::text[]) t) AS steady,
                  (SELECT sum(${TABLE_BYTES('t::regclass')}) FROM unnest($2::text[]) t) AS records`,
          [STEADY_TABLES, RECORD_TABLES],
        );
        const temporalDb = await query<{ active: number; idle: number; waiting: number; oldest: number }>(
          `SELECT count(*) FILTER (WHERE state = 'active')::int AS active,
                  count(*) FILTER (WHERE state LIKE 'idle in transaction%')::int AS idle,
                  count(*) FILTER (WHERE wait_event_type = 'Lock')::int AS waiting,
                  coalesce(extract(epoch FROM max(now() - xact_start)), 0)::float8 AS oldest
           FROM pg_stat_activity WHERE datname = 'temporal' AND pid <> pg_backend_pid()`,
        );
        if (sizes?.[0]) {
          const mib = (v: string) => round(Number(v) / 2 ** 20, 2);
          const t = temporalDb?.[0];
          samples.push({
            seconds: round(soakAt()),
            memoryMiB,
            databaseMiB: {
              intake: mib(sizes[0].intake),
              temporal: mib(sizes[0].temporal),
              steady: mib(sizes[0].steady),
              records: mib(sizes[0].records),
            },
            events: load.counts.events - eventsAtSoakStart,
            lagMaxSeconds: Math.max(
              0,
              ...probesNow()
                .filter((p) => p.at >= soakAt() - SAMPLE_SECONDS)
                .map((p) => p.lagSeconds),
            ),
            temporalDb: t
              ? { active: t.active, idleInTransaction: t.idle, waitingOnLocks: t.waiting, oldestTransactionSeconds: round(t.oldest) }
              : null,
            webhooks: { received: receiver.firstSeen.size, endpoints: await endpointSamples(raw, senders, endpointIds) },
          });
        }
        await sleep(SAMPLE_SECONDS * 1000);
      }
    })();

    const settler = (async () => {
      while (running) {
        await load.settle().catch(() => undefined);
        await sleep(5000);
      }
    })();

    // Faults: every fifth of the soak (at most every 10 minutes), the kinds in turn.
    const interval = Math.min(600, soakSeconds / 5);
    /** Dropped replicas coming back (awaited before the end). */
    const comeBacks: Promise<unknown>[] = [];
    const comeBackErrors: string[] = [];
    const faulter = (async () => {
      for (let k = 1; k * interval <= soakSeconds - interval / 2; k++) {
        await sleep(Math.max(0, soakStart + k * interval * 1000 - Date.now()));
        if (!running) return;
        const kind = FAULTS[(k - 1) % FAULTS.length]!;
        const faultAt = soakAt();
        progress(`fault ${k}: ${kind}`);
        const t0 = performance.now();
        if (kind === 'worker-sigkill') {
          // The worker whose drainer holds the probe's shard: the recovery measured is the shard's
          // hand-over to a live worker, not a coin's toss between the two.
          const holder = probeSession.id ? await workerDrainingSession(bench, probeSession.id).catch(() => null) : null;
          const victim = holder ?? fleet.procs.find((p) => p.role === 'worker' && isRunning(p))!;
          progress(`killing ${victim.name}${holder ? " (it drains the probe's shard)" : ''}`);
          await fleet.kill(victim);
          await fleet.startWorker(`worker-${++workerCount}`);
        } else if (kind === 'postgres-restart') await fleet.restartPostgres();
        else if (kind === 'temporal-restart') await fleet.cluster.restart();
        else {
          const victim = fleet.procs.find((p) => p.role === 'api' && isRunning(p))!;
          await fleet.kill(victim);
          const port = Number(new URL(victim.url!).port);
          comeBacks.push(
            sleep(API_BACK_AFTER_MS)
              .then(() => fleet.startApi(victim.name, port))
              .catch((error: unknown) => comeBackErrors.push(`${victim.name} did not come back: ${String(error)}`)),
          );
        }
        faults.push({
          kind,
          at: round(faultAt),
          tookSeconds: round((performance.now() - t0) / 1000, 2),
          recoverySeconds: null,
          maxLagSeconds: 0,
        });
      }
    })();

    await load.run({ eventsPerSecond: rate, until });
    running = false;
    progress('the soak is over: finishing the open sessions');
    await faulter;
    await Promise.all(comeBacks);
    await Promise.all([prober, settler, sampler]);
    await senders.close();
    const probes = probesNow();
    const offered = (load.counts.events - eventsAtSoakStart) / soakSeconds;
    await load.drain();
    await load.finish();
    await load.settle({ all: true, timeoutMs: SETTLE_TIMEOUT_MS });

    // Every delivery due is made (or the wait ends).
    await untilDeliveriesMade(raw, endpointIds, SETTLE_TIMEOUT_MS);

    // The checks.
    const failures: string[] = [...comeBackErrors];
    const mismatched = load.counts.sessionMismatches;
    if (mismatched.length)
      failures.push(`${mismatched.length} sessions lost events or were charged other than once: ${mismatched.slice(0, 5).join('; ')}`);
    const charges: Record<string, unknown>[] = [];
    for (const tenant of tenants) {
      const {
        rows: [row],
      } = await raw.query<{ units: number; debits: number; balance: number; feedback: number; recordings: number }>(
        `SELECT (SELECT coalesce(sum(quantity), 0)::int FROM usage_records WHERE organization_id = $1) AS units,
                (SELECT coalesce(-sum(amount), 0)::int FROM credit_transactions WHERE organization_id = $1 AND amount < 0) AS debits,
                (SELECT credit_balance::int FROM organizations WHERE id = $1) AS balance,
                (SELECT count(*)::int FROM feedback_records WHERE organization_id = $1) AS feedback,
                (SELECT count(*)::int FROM recordings WHERE organization_id = $1) AS recordings`,
        [tenant.organizationId],
      );
      const answers = load.counts.byTenant[tenant.organizationId]!.answers;
      charges.push({ answers, ...row });
      if (row!.units !== answers)
        failures.push(`tenant ${tenant.organizationId}: ${answers} answers accepted, ${row!.units} units charged`);
      if (row!.debits !== row!.units || row!.balance !== 1_000_000_000 - row!.units)
        failures.push(`tenant ${tenant.organizationId}: credits ${JSON.stringify(row)} do not match the units`);
      // Everything the load created it deleted: what remains was stored twice.
      if (row!.feedback !== 0) failures.push(`tenant ${tenant.organizationId}: ${row!.feedback} feedback records stored twice`);
      if (row!.recordings !== 0) failures.push(`tenant ${tenant.organizationId}: ${row!.recordings} recordings stored twice`);
    }
    if (load.counts.recordingsVerified !== load.counts.recordings)
      failures.push(`${load.counts.recordings - load.counts.recordingsVerified} recordings' transcripts did not read back`);
    if (load.counts.refused) failures.push(`${load.counts.refused} requests refused: ${load.refusals.slice(0, 5).join('; ')}`);
    const { rows: deliveries } = await raw.query<{ id: string; created: number; status: string }>(
      `SELECT d.id, (extract(epoch FROM e.recorded_at) * 1000)::float8 AS created, d.status
           FROM domain_events e
           JOIN webhook_endpoints w ON w.organization_id = e.organization_id AND e.recorded_at >= w.created_at
           LEFT JOIN webhook_deliveries d ON d.endpoint_id = w.id AND d.event_id = e.id
          WHERE w.id = ANY($1::uuid[])`,
      [endpointIds],
    );
    const missing = deliveries.filter((d) => d.id === null || d.status !== 'succeeded' || !receiver.firstSeen.has(d.id));
    if (missing.length) failures.push(`${missing.length} of ${deliveries.length} domain events without a delivery the receiver got`);
    const delivered = deliveries
      .filter((d) => d.id !== null && receiver.firstSeen.has(d.id))
      .map((d) => ({ created: d.created, ms: receiver.firstSeen.get(d.id)! - d.created }));
    const webhookMs = delivered.map((d) => d.ms).sort((a, b) => a - b);
    // By the minute of the soak the event was recorded in: which faults the senders lag behind.
    const webhookByMinute = new Map<number, number[]>();
    for (const d of delivered) {
      const minute = Math.floor((d.created - soakStart) / 60_000);
      webhookByMinute.set(minute, [...(webhookByMinute.get(minute) ?? []), d.ms]);
    }

    const late = delivered.filter((d) => d.ms > WEBHOOK_GOAL_SECONDS * 1000);
    if (late.length)
      failures.push(
        `${late.length} deliveries arrived more than ${WEBHOOK_GOAL_SECONDS} s after their event (the latest ${round(Math.max(...late.map((d) => d.ms)) / 1000)} s)`,
      );

    // Lag, and each fault's recovery.
    for (const [k, fault] of faults.entries()) {
      // Recovered: a probe under LAG_UNDER_SECONDS, and every probe of the STABLE_SECONDS after it
      // too, up to the next fault (a replaced worker joins, and its shards move, some seconds after
      // the kill).
      const next = faults[k + 1]?.at ?? Infinity;
      const after = probes.filter((p) => p.at >= fault.at && p.at < next);
      const recovered = after.find(
        (p) =>
          p.lagSeconds < LAG_UNDER_SECONDS &&
          after.every((q) => q.at < p.at || q.at > p.at + STABLE_SECONDS || q.lagSeconds < LAG_UNDER_SECONDS),
      );
      fault.recoverySeconds = recovered ? round(recovered.at + recovered.lagSeconds - fault.at, 2) : null;
      const window = probes.filter((p) => p.at + p.lagSeconds >= fault.at && p.at <= (recovered?.at ?? Infinity));
      fault.maxLagSeconds = round(Math.max(0, ...window.map((p) => p.lagSeconds)), 2);
      if (fault.recoverySeconds === null || fault.recoverySeconds > RECOVERY_GOAL_SECONDS)
        failures.push(
          `after ${fault.kind} at ${fault.at} s the lag was not under ${LAG_UNDER_SECONDS} s within ${RECOVERY_GOAL_SECONDS} s`,
        );
    }
    const lags = probes.map((p) => p.lagSeconds).sort((a, b) => a - b);
    const calm = probes
      .filter((p) => !faults.some((f) => p.at + p.lagSeconds >= f.at && p.at <= f.at + (f.recoverySeconds ?? Infinity)))
      .map((p) => p.lagSeconds)
      .sort((a, b) => a - b);
    const lagSummary = (xs: number[]) =>
      xs.length
        ? { probes: xs.length, p50: percentile(xs, 50), p95: percentile(xs, 95), p99: percentile(xs, 99), max: percentile(xs, 100) }
        : null;

    // Memory and size after the warm-up.
    const warm = samples.filter((s) => s.seconds >= soakSeconds / 5);
    const names = [...new Set(warm.flatMap((s) => Object.keys(s.memoryMiB)))];
    const memory = Object.fromEntries(
      names.map((name) => {
        const values = warm.map((s) => s.memoryMiB[name]).filter((v): v is number => v !== undefined);
        // Sampled from the soak's start to its end, never restarted: its growth is the process's own.
        const throughout =
          samples.every((s) => s.memoryMiB[name] !== undefined) &&
          !faults.some((f) => f.kind === 'postgres-restart' && name === 'postgres') &&
          !(name === 'temporal-server' && faults.some((f) => f.kind === 'temporal-restart'));
        return [
          name,
          {
            first: values[0] ?? null,
            last: values.at(-1) ?? null,
            max: Math.max(...values),
            growthPercent: growthPercent(values),
            ranThroughout: throughout,
          },
        ];
      }),
    );
    const judged = o.minutes >= FLAT_JUDGED_FROM_MINUTES;
    for (const [name, m] of Object.entries(memory))
      if (judged && m.ranThroughout && m.growthPercent !== null && m.growthPercent > FLAT_GOAL_PERCENT)
        failures.push(`${name}'s memory grew ${m.growthPercent}% after the warm-up`);
    const steadyGrowth = growthPercent(warm.map((s) => s.databaseMiB.steady));
    if (judged && steadyGrowth !== null && steadyGrowth > FLAT_GOAL_PERCENT)
      failures.push(`the steady tables grew ${steadyGrowth}% after the warm-up`);
    const first = warm[0];
    const last = warm.at(-1);
    const recordBytesPerEvent =
      first && last && last.events > first.events
        ? Math.round(((last.databaseMiB.records - first.databaseMiB.records) * 2 ** 20) / (last.events - first.events))
        : null;

    const { sessionMismatches: _mismatches, byTenant: _byTenant, ...counts } = load.counts;
    return {
      minutes: o.minutes,
      fleet: { apis: apiUrls.length, workers: 2, tenants: TENANTS, drainShards: Number(fleet.env.AGENT_DRAIN_SHARDS) },
      capacity,
      rate: { targetEventsPerSecond: round(rate), achievedEventsPerSecond: round(offered) },
      load: counts,
      faults,
      lag: {
        all: lagSummary(lags),
        outsideFaults: lagSummary(calm),
        // The five slowest probes (seconds into the soak, lag): where the tail is.
        worst: [...probes].sort((a, b) => b.lagSeconds - a.lagSeconds).slice(0, 5),
        // Every probe over LAG_UNDER_SECONDS, in time order (the first 200): when the lag was high.
        over: probes.filter((p) => p.lagSeconds >= LAG_UNDER_SECONDS).slice(0, 200),
        goal: `under ${LAG_UNDER_SECONDS} s within ${RECOVERY_GOAL_SECONDS} s of each fault`,
      },
      webhooks: {
        deliveries: deliveries.length,
        p50Ms: webhookMs.length ? percentile(webhookMs, 50) : null,
        p95Ms: webhookMs.length ? percentile(webhookMs, 95) : null,
        maxMs: webhookMs.at(-1) ?? null,
        goal: `every delivery within ${WEBHOOK_GOAL_SECONDS} s of its event`,
        byMinute: [...webhookByMinute.entries()]
          .sort(([a], [b]) => a - b)
          .map(([minute, ms]) => {
            const sorted = ms.sort((a, b) => a - b);
            return { minute, deliveries: sorted.length, p50Ms: percentile(sorted, 50), p95Ms: percentile(sorted, 95) };
          }),
      },
      checks: {
        sessionsMismatched: mismatched.length,
        deliveriesMissing: missing.length,
        charges,
      },
      memory: { afterWarmUp: memory, goalPercent: FLAT_GOAL_PERCENT, judged },
      database: {
        steadyGrowthPercent: steadyGrowth,
        recordBytesPerEvent,
        first: first?.databaseMiB ?? null,
        last: last?.databaseMiB ?? null,
      },
      timeline: samples,
      failures,
      seconds: round(at()),
    };
  } finally {
    running = false;
    await bench.stop();
  }
}

interface SendersProbe {
  describe(endpointId: string): Promise<EndpointSample['sender']>;
  close(): Promise<void>;
}

/** Describes endpoints' sender workflows (null when the server does not answer: it is restarting). */
async function sendersProbe(address: string, namespace: string): Promise<SendersProbe> {
  const connection = await Connection.connect({ address });
  const client = new WorkflowClient({ connection, namespace });
  const secondsAgo = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) =>
    t?.seconds == null ? null : round((Date.now() - Number(t.seconds) * 1000 - (t.nanos ?? 0) / 1e6) / 1000);
  return {
    async describe(endpointId) {
      try {
        const d = await client.getHandle(webhookEndpointWorkflowId(endpointId)).describe();
        const a = d.raw.pendingActivities?.[0];
        return {
          status: d.status.name,
          historyLength: d.historyLength,
          call: a
            ? {
                state: String(a.state ?? ''),
                attempt: a.attempt ?? 0,
                startedSecondsAgo: secondsAgo(a.lastStartedTime),
                heartbeatSecondsAgo: secondsAgo(a.lastHeartbeatTime),
                lastFailure: a.lastFailure?.message ?? null,
              }
            : null,
        };
      } catch {
        return null;
      }
    },
    close: () => connection.close(),
  };
}

async function endpointSamples(raw: pg.Pool, senders: SendersProbe, endpointIds: readonly string[]): Promise<EndpointSample[]> {
  const { rows } = await raw
    .query<{
      id: string;
      pending: number;
      due: number;
      takeable: number;
      retrying: number;
      last_error: string | null;
      oldest: number | null;
    }>(
      `SELECT w.id,
              count(d.id)::int AS pending,
              count(d.id) FILTER (WHERE d.next_attempt_at <= now())::int AS due,
              count(d.id) FILTER (WHERE d.next_attempt_at <= now() AND (d.subject_id IS NULL OR NOT EXISTS (
                SELECT 1 FROM webhook_deliveries h WHERE h.endpoint_id = w.id AND h.status = 'pending'
                   AND h.subject_id = d.subject_id AND h.event_id < d.event_id)))::int AS takeable,
              count(d.id) FILTER (WHERE d.attempts > 0)::int AS retrying,
              (array_agg(d.last_error ORDER BY d.last_attempt_at DESC) FILTER (WHERE d.last_error IS NOT NULL))[1] AS last_error,
              extract(epoch FROM now() - min(d.next_attempt_at) FILTER (WHERE d.next_attempt_at <= now()))::float8 AS oldest
         FROM unnest($1::uuid[]) WITH ORDINALITY AS w(id, n)
         -- Only the pending deliveries are joined.
         LEFT JOIN webhook_deliveries d ON d.endpoint_id = w.id AND d.status = 'pending'
        GROUP BY w.id, w.n ORDER BY w.n`,
      [endpointIds],
    )
    .catch(() => ({ rows: [] }));
  return Promise.all(
    rows.map(async (r) => ({
      pending: r.pending,
      due: r.due,
      takeable: r.takeable,
      retrying: r.retrying,
      lastError: r.last_error,
      oldestDueSeconds: r.oldest === null ? null : round(r.oldest),
      sender: await senders.describe(r.id),
    })),
  );
}
