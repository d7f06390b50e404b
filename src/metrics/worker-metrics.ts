import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { DatabasePool } from 'slonik';
import { createActivityMetrics, type ActivityMetrics } from './activity-metrics.js';
import { operationalStats } from '../db/repositories/operational-stats.js';

/**
 * The worker process's metrics: its own (prom-client: process CPU, memory, event-loop lag) and the
 * Temporal SDK's runtime metrics (`temporal_*`: task slots, poll and schedule-to-start latencies,
 * workflow and activity outcomes), which the SDK's core exports on a loopback port of its own. One
 * scrape of METRICS_PORT returns both.
 */
export interface WorkerMetrics {
  registry: Registry;
  /** What the activities count (analyses, media phases), on the same registry. */
  activities: ActivityMetrics;
  /** Where the SDK's exporter listens (`127.0.0.1:port`), for `Runtime.install`. */
  sdkBindAddress: string;
  /**
   * Adds the backlog gauges, read from PostgreSQL at each scrape (the same values from every worker:
   * aggregate them with max, not sum).
   */
  watch(pool: DatabasePool): void;
  /** Both sets, in the Prometheus text format. */
  scrape(): Promise<string>;
}

const ACTIVE_PHASES = ['waiting', 'transferring', 'encoding', 'finalizing'];
const ACTIVE_BOT_STATES = ['creating', 'joining', 'waiting_room', 'in_call', 'recording'];

export function createWorkerMetrics(o: { sdkPort: number }): WorkerMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const sdkBindAddress = `127.0.0.1:${o.sdkPort}`;
  const registers = [registry];
  const gauges = {
    waiting: new Gauge({
      name: 'intake_agent_sessions_waiting',
      help: 'Agent sessions with a wake requested: ingested work not yet processed.',
      registers,
    }),
    lag: new Gauge({
      name: 'intake_agent_processing_lag_seconds',
      help: 'Age of the oldest requested session wake (0 when none waits).',
      registers,
    }),
    analyses: new Gauge({ name: 'intake_agent_analyses_queued', help: 'Analyses of assistant responses queued.', registers }),
    blocked: new Gauge({
      name: 'intake_agent_sessions_billing_blocked',
      help: 'Agent sessions held until their organization has credits.',
      registers,
    }),
    media: new Gauge({
      name: 'intake_media_ingestions_active',
      help: 'Media ingestions not yet ready, failed or cancelled, by phase.',
      labelNames: ['phase'],
      registers,
    }),
    mediaIdle: new Gauge({
      name: 'intake_media_ingestion_idle_seconds',
      help: 'By phase: the longest an active media ingestion has gone without progress or a phase change (0 when none is in the phase).',
      labelNames: ['phase'],
      registers,
    }),
    bots: new Gauge({
      name: 'intake_meeting_bots_active',
      help: 'Meeting bots not done or failed, by state.',
      labelNames: ['state'],
      registers,
    }),
  };
  let pool: DatabasePool | null = null;
  const readBacklog = async () => {
    if (!pool) return;
    const stats = await operationalStats(pool);
    gauges.waiting.set(stats.sessionsWaiting);
    gauges.lag.set(stats.oldestWakeAgeSeconds);
    gauges.analyses.set(stats.analysesQueued);
    gauges.blocked.set(stats.sessionsBillingBlocked);
    for (const phase of ACTIVE_PHASES) {
      gauges.media.set({ phase }, stats.mediaByPhase[phase] ?? 0);
      gauges.mediaIdle.set({ phase }, stats.mediaIdleSecondsByPhase[phase] ?? 0);
    }
    for (const state of ACTIVE_BOT_STATES) gauges.bots.set({ state }, stats.botsByState[state] ?? 0);
  };
  return {
    registry,
    activities: createActivityMetrics(registry),
    sdkBindAddress,
    watch(p) {
      pool = p;
    },
    async scrape() {
      // Without PostgreSQL the gauges keep their last values; the scrape still answers.
      await readBacklog().catch(() => undefined);
      const own = await registry.metrics();
      // The SDK's exporter answers once the Runtime is installed; until then (or if it fails) only ours.
      const sdk = await fetch(`http://${sdkBindAddress}/metrics`, { signal: AbortSignal.timeout(5_000) }).then(
        (res) => (res.ok ? res.text() : ''),
        () => '',
      );
      return sdk ? `${own}\n${sdk}` : own;
    },
  };
}

/** The SDK's Prometheus exporter, named by Prometheus conventions (`_total`, base units, seconds). */
export function sdkPrometheus(bindAddress: string) {
  return { prometheus: { bindAddress, countersTotalSuffix: true, unitSuffix: true, useSecondsForDurations: true } };
}
