/**
 * Pooler: `npm run bench -- pooler`. What PgBouncer in transaction mode (docker-compose.yml's
 * pgbouncer service, deploy/pgbouncer/pgbouncer.ini) costs and gives, against its baseline measured
 * in the same run on the same machine: the same fleet (two API replicas, two workers, the
 * production Temporal server) with the pools straight to PostgreSQL (harness/fleet.ts, `pooler:
 * false`), fleets of either kind alternating for BENCH_POOLER_ROUNDS rounds (3; medians reported). For each:
 *  - the mix's capacity (bench/mixed-load.ts, closed loop), and where the cores went (PgBouncer's
 *    own among them);
 *  - the processing lag p95 at one fixed rate (the same for both: half the pooled capacity), from
 *    a probe (one event a second into a quiet session);
 *  - the backends PostgreSQL held for the `intake` database at most (what a pooler is for: with
 *    it, its server connections and the direct ones; without, every process's pool).
 */
import { sleep } from '../src/dev/net.js';
import { fleetCpuMs, coresBetween, measureCapacity, probeLag, startLoadFleet, type Capacity, type Probe } from './load-fleet.js';
import { MixedLoad, type Tenant } from './mixed-load.js';
import { median, percentile } from './stats.js';

const TENANTS = 4;
const ROUNDS = Number(process.env.BENCH_POOLER_ROUNDS ?? 3);
const CAPACITY_SECONDS = 30;
const CAPACITY_CONCURRENCY = 32;
const SETTLE_TIMEOUT_MS = 5 * 60_000;
const LAG_SECONDS = Number(process.env.BENCH_POOLER_LAG_SECONDS ?? 90);
/** The lag phase's first seconds are not measured: the capacity phase's backlog drains in them. */
const LAG_SETTLE_SECONDS = 15;

const progress = (message: string) => process.stderr.write(`[pooler] ${new Date().toISOString()} ${message}\n`);
const round = (value: number, digits = 2) => Number(value.toFixed(digits));

interface ModeResult {
  capacity: Capacity;
  lag: { eventsPerSecond: number; probes: number; p50Ms: number | null; p95Ms: number | null; cores: Record<string, number> };
  /** The most backends of the `intake` database PostgreSQL held at once, sampled every 500 ms. */
  maxBackends: number;
}

async function measureMode(mode: 'pgbouncer' | 'direct', lagRate: number | null): Promise<ModeResult> {
  progress(`${mode}: starting the fleet`);
  const bench = await startLoadFleet({ name: `pooler-${mode}`, pooler: mode === 'pgbouncer' });
  const { fleet, raw, replicas } = bench;
  let running = true;
  let maxBackends = 0;
  const sampler = (async () => {
    while (running) {
      const { rows } = await raw
        .query<{
          n: number;
        }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = 'intake' AND backend_type = 'client backend'`)
        .catch(() => ({ rows: [{ n: 0 }] }));
      maxBackends = Math.max(maxBackends, rows[0]!.n);
      await sleep(500);
    }
  })();
  try {
    const tenants: Tenant[] = [];
    for (let i = 0; i < TENANTS; i++) tenants.push(await bench.newTenant());
    const load = new MixedLoad(replicas, tenants, raw);
    progress(`${mode}: capacity, ${CAPACITY_SECONDS} s closed loop at concurrency ${CAPACITY_CONCURRENCY}`);
    const capacity = await measureCapacity(load, fleet, {
      seconds: CAPACITY_SECONDS,
      concurrency: CAPACITY_CONCURRENCY,
      settleTimeoutMs: SETTLE_TIMEOUT_MS,
    });
    const rate = lagRate ?? round(capacity.eventsPerSecond / 2, 1);
    progress(`${mode}: capacity ${capacity.eventsPerSecond} events/s; lag at ${rate} events/s for ${LAG_SECONDS} s`);
    const probes: Probe[] = [];
    let probing = true;
    const prober = probeLag(load, raw, tenants[0]!, { everyMs: 1000, running: () => probing, probes });
    const from = Date.now();
    const cpuBefore = await fleetCpuMs(fleet);
    await load.run({ eventsPerSecond: rate, until: from + LAG_SECONDS * 1000 });
    const cpuAfter = await fleetCpuMs(fleet);
    const to = Date.now();
    probing = false;
    await prober;
    await load.finish();
    await load.settle({ all: true, timeoutMs: SETTLE_TIMEOUT_MS });
    const lags = probes
      .filter((p) => p.sentAt >= from + LAG_SETTLE_SECONDS * 1000)
      .map((p) => p.lagSeconds * 1000)
      .sort((a, b) => a - b);
    return {
      capacity,
      lag: {
        eventsPerSecond: rate,
        probes: lags.length,
        p50Ms: lags.length ? percentile(lags, 50) : null,
        p95Ms: lags.length ? percentile(lags, 95) : null,
        cores: coresBetween(cpuBefore, cpuAfter, to - from),
      },
      maxBackends,
    };
  } finally {
    running = false;
    await sampler;
    await bench.stop();
  }
}

export async function benchPooler(): Promise<Record<string, unknown>> {
  // Fleets of either kind alternate: two fleets started one after the other differ by more than the
  // pooler does (capacity 73 and 128 events/s in two runs of the same fleet, decision 0214).
  const rounds: { pgbouncer: ModeResult; direct: ModeResult }[] = [];
  let lagRate: number | null = null;
  for (let r = 0; r < ROUNDS; r++) {
    progress(`round ${r + 1} of ${ROUNDS}`);
    const pooled = await measureMode('pgbouncer', lagRate);
    lagRate = pooled.lag.eventsPerSecond;
    const direct = await measureMode('direct', lagRate);
    rounds.push({ pgbouncer: pooled, direct });
  }
  const med = (values: (number | null)[]) => {
    const known = values.filter((v): v is number => v !== null);
    return known.length ? median(known) : null;
  };
  const summary = (mode: 'pgbouncer' | 'direct') => ({
    capacityEventsPerSecond: med(rounds.map((x) => x[mode].capacity.eventsPerSecond)),
    lagP50Ms: med(rounds.map((x) => x[mode].lag.p50Ms)),
    lagP95Ms: med(rounds.map((x) => x[mode].lag.p95Ms)),
    // The whole fleet's cores at the fixed rate: the same work through either path.
    lagPhaseCores: med(
      rounds.map((x) =>
        round(
          Object.values(x[mode].lag.cores).reduce((a, b) => a + b, 0),
          3,
        ),
      ),
    ),
    pgbouncerCores: med(rounds.map((x) => x[mode].lag.cores.pgbouncer ?? 0)),
    maxBackends: med(rounds.map((x) => x[mode].maxBackends)),
  });
  const pgbouncer = summary('pgbouncer');
  const direct = summary('direct');
  const ratio = (a: number | null, b: number | null) => (a !== null && b !== null && b > 0 ? round(a / b) : null);
  return {
    tenants: TENANTS,
    rounds: ROUNDS,
    lagSeconds: LAG_SECONDS,
    lagEventsPerSecond: lagRate,
    // The medians over the rounds.
    pgbouncer,
    direct,
    // Through PgBouncer over straight to PostgreSQL (the baseline, measured in the same run).
    ratios: {
      capacity: ratio(pgbouncer.capacityEventsPerSecond, direct.capacityEventsPerSecond),
      lagP95: ratio(pgbouncer.lagP95Ms, direct.lagP95Ms),
      lagPhaseCores: ratio(pgbouncer.lagPhaseCores, direct.lagPhaseCores),
      maxBackends: ratio(pgbouncer.maxBackends, direct.maxBackends),
    },
    each: rounds,
  };
}
