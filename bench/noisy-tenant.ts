/**
 * The noisy tenant: `npm run bench -- noisy-tenant`. On the fleet (bench/load-fleet.ts: two API
 * replicas, two workers, the production Temporal server, docker-compose.yml's environment and its
 * production rate limits), QUIET tenants send the mixed load (bench/mixed-load.ts) at the same rate
 * each, and in every other phase one more tenant sends ten times that rate (its ingest, feedback,
 * recordings and webhooks). Phases alternate without and with it, ROUNDS times each, PHASE_SECONDS
 * long, so that drift over the run falls on both sides. A third phase in each round is the control:
 * the same extra load spread over NOISY_FACTOR more tenants at the quiet rate, so that what one
 * tenant's concentration costs the others (fairness) shows apart from what the load itself costs
 * them on a shared machine (capacity).
 *
 * The rate: the noisy phase's whole load is LOAD_SHARE of the capacity the mix measures first, in
 * the same run (so the quiet tenants alone are LOAD_SHARE × QUIET / (QUIET + 10) of it).
 *
 * Measured, for the quiet tenants only, in each phase: the processing lag (a probe per quiet tenant,
 * one event a second into a quiet session, from its POST until the watermark passes it) and the
 * webhook latency (each delivery of theirs whose domain event was recorded in the phase, from the
 * event until the receiver got it). Goal: with the noisy tenant, their p95s at most 1.2× those
 * without it. Reported beside it: their p95s with the noisy tenant over those with the spread load
 * (1.0: the one tenant costs the others no more than the same load from many).
 */
import { sleep } from '../src/dev/net.js';
import { coresBetween, fleetCpuMs, measureCapacity, probeLag, startLoadFleet, untilDeliveriesMade, type Probe } from './load-fleet.js';
import { MixedLoad, type Tenant } from './mixed-load.js';
import { percentile } from './stats.js';

const QUIET = 4;
const NOISY_FACTOR = 10;
const PHASE_SECONDS = Number(process.env.BENCH_NOISY_PHASE_SECONDS ?? 120);
const ROUNDS = 2;
const LOAD_SHARE = 0.7;
const CAPACITY_SECONDS = 30;
const CAPACITY_CONCURRENCY = 32;
const SETTLE_TIMEOUT_MS = 5 * 60_000;
/** Each phase's first seconds are not measured: the previous phase's backlog drains in them. */
const PHASE_SETTLE_SECONDS = 15;
const GOAL_RATIO = 1.2;

const progress = (message: string) => process.stderr.write(`[noisy-tenant] ${new Date().toISOString()} ${message}\n`);
const round = (value: number, digits = 2) => Number(value.toFixed(digits));

type PhaseKind = 'without' | 'noisy' | 'spread';

const cpuMsOfThisProcess = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

interface Phase {
  kind: PhaseKind;
  from: number;
  to: number;
  /** Each process's share of one core over the phase, this benchmark's own (the load, the probes, the receiver) included. */
  cores: Record<string, number>;
}

export async function benchNoisyTenant(): Promise<Record<string, unknown>> {
  progress('starting the fleet');
  const bench = await startLoadFleet({ name: 'noisy-tenant' });
  const { fleet, raw, receiver, replicas } = bench;
  let running = true;
  try {
    const quiet: Tenant[] = [];
    for (let i = 0; i < QUIET; i++) quiet.push(await bench.newTenant());
    const noisy = await bench.newTenant();
    const spread: Tenant[] = [];
    for (let i = 0; i < NOISY_FACTOR; i++) spread.push(await bench.newTenant());
    const tenants = [...quiet, noisy, ...spread];
    const load = new MixedLoad(replicas, tenants, raw);

    progress(`capacity: ${CAPACITY_SECONDS} s closed loop at concurrency ${CAPACITY_CONCURRENCY}`);
    const capacity = await measureCapacity(load, fleet, {
      seconds: CAPACITY_SECONDS,
      concurrency: CAPACITY_CONCURRENCY,
      settleTimeoutMs: SETTLE_TIMEOUT_MS,
    });
    const perQuiet = (LOAD_SHARE * capacity.eventsPerSecond) / (QUIET + NOISY_FACTOR);
    progress(
      `capacity ${capacity.eventsPerSecond} events/s; ${round(perQuiet, 1)} events/s a quiet tenant, ${round(perQuiet * NOISY_FACTOR, 1)} the noisy one`,
    );

    const probes = quiet.map(() => [] as Probe[]);
    const probers = quiet.map((tenant, i) => probeLag(load, raw, tenant, { everyMs: 1000, running: () => running, probes: probes[i]! }));
    const settler = (async () => {
      while (running) {
        await load.settle().catch(() => undefined);
        await sleep(5000);
      }
    })();

    const phases: Phase[] = [];
    for (let r = 0; r < ROUNDS; r++)
      for (const kind of ['without', 'noisy', 'spread'] as const) {
        const from = Date.now();
        const cpuBefore = { ...(await fleetCpuMs(fleet)), bench: cpuMsOfThisProcess() };
        progress(
          `round ${r + 1}: ${{ without: 'the quiet tenants alone', noisy: 'with the noisy tenant', spread: `with ${NOISY_FACTOR} more quiet tenants (the same load spread)` }[kind]}`,
        );
        await load.run({
          eventsPerSecond: perQuiet * (QUIET + (kind === 'without' ? 0 : NOISY_FACTOR)),
          until: from + PHASE_SECONDS * 1000,
          weights: [...quiet.map(() => 1), kind === 'noisy' ? NOISY_FACTOR : 0, ...spread.map(() => (kind === 'spread' ? 1 : 0))],
        });
        const to = Date.now();
        const cpuAfter = { ...(await fleetCpuMs(fleet)), bench: cpuMsOfThisProcess() };
        phases.push({ kind, from: from + PHASE_SETTLE_SECONDS * 1000, to, cores: coresBetween(cpuBefore, cpuAfter, to - from) });
      }
    running = false;
    await Promise.all([...probers, settler]);
    await load.finish();
    await load.settle({ all: true, timeoutMs: SETTLE_TIMEOUT_MS });
    // Every delivery due is made (or the wait ends).
    const endpointIds = tenants.map((t) => t.endpointId);
    await untilDeliveriesMade(raw, endpointIds, SETTLE_TIMEOUT_MS);
    const { rows: deliveries } = await raw.query<{ id: string; recorded: number; organizationId: string }>(
      `SELECT d.id, (extract(epoch FROM e.recorded_at) * 1000)::float8 AS recorded, e.organization_id AS "organizationId"
         FROM webhook_deliveries d JOIN domain_events e ON e.id = d.event_id
        WHERE d.endpoint_id = ANY($1::uuid[]) AND d.status = 'succeeded'`,
      [endpointIds],
    );
    const quietIds = new Set(quiet.map((t) => t.organizationId));

    const p95 = (xs: number[]) =>
      xs.length
        ? percentile(
            [...xs].sort((a, b) => a - b),
            95,
          )
        : null;
    const p50 = (xs: number[]) =>
      xs.length
        ? percentile(
            [...xs].sort((a, b) => a - b),
            50,
          )
        : null;
    const measure = (kind: PhaseKind) => {
      const windows = phases.filter((p) => p.kind === kind);
      const inside = (t: number) => windows.some((w) => t >= w.from && t < w.to);
      const lags = probes
        .flat()
        .filter((p) => inside(p.sentAt))
        .map((p) => p.lagSeconds * 1000);
      const webhooks = deliveries
        .filter((d) => quietIds.has(d.organizationId) && inside(d.recorded) && receiver.firstSeen.has(d.id))
        .map((d) => receiver.firstSeen.get(d.id)! - d.recorded);
      return {
        lagMs: { probes: lags.length, p50: p50(lags), p95: p95(lags) },
        webhookMs: { deliveries: webhooks.length, p50: p50(webhooks), p95: p95(webhooks) },
      };
    };
    const without = measure('without');
    const withNoisy = measure('noisy');
    const withSpread = measure('spread');
    const ratio = (a: number | null, b: number | null) => (a !== null && b !== null && b > 0 ? round(a / b) : null);
    const lagRatio = ratio(withNoisy.lagMs.p95, without.lagMs.p95);
    const webhookRatio = ratio(withNoisy.webhookMs.p95, without.webhookMs.p95);
    const { sessionMismatches, byTenant, ...counts } = load.counts;
    const failures = [
      ...(sessionMismatches.length ? [`${sessionMismatches.length} sessions lost events or were charged other than once`] : []),
      ...(load.counts.refused ? [`${load.counts.refused} requests refused: ${load.refusals.slice(0, 3).join('; ')}`] : []),
    ];
    return {
      quietTenants: QUIET,
      noisyFactor: NOISY_FACTOR,
      phaseSeconds: PHASE_SECONDS,
      rounds: ROUNDS,
      capacity,
      rate: { quietTenantEventsPerSecond: round(perQuiet, 1), noisyTenantEventsPerSecond: round(perQuiet * NOISY_FACTOR, 1) },
      eventsByTenant: Object.fromEntries(
        tenants.map((t, i) => [
          i < QUIET ? `quiet-${i + 1}` : i === QUIET ? 'noisy' : `spread-${i - QUIET}`,
          byTenant[t.organizationId]!.events,
        ]),
      ),
      quiet: { without, with: withNoisy, withSpread },
      // Where the machine's two cores went in each phase (shares of one core).
      phases: phases.map((p) => ({ kind: p.kind, seconds: round((p.to - p.from) / 1000, 1), cores: p.cores })),
      // With the noisy tenant over without it (the goal's), and over the same load spread (fairness).
      ratios: {
        lagP95: lagRatio,
        webhookP95: webhookRatio,
        lagP95OverSpread: ratio(withNoisy.lagMs.p95, withSpread.lagMs.p95),
        webhookP95OverSpread: ratio(withNoisy.webhookMs.p95, withSpread.webhookMs.p95),
      },
      goals: {
        ratio: GOAL_RATIO,
        lagP95Holds: lagRatio !== null && lagRatio <= GOAL_RATIO,
        webhookP95Holds: webhookRatio !== null && webhookRatio <= GOAL_RATIO,
      },
      load: counts,
      retries: load.counts.retries,
      failures,
    };
  } finally {
    running = false;
    await bench.stop();
  }
}
