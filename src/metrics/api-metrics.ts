import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { DatabasePool } from 'slonik';

/**
 * The API process's Prometheus metrics (prom-client), served on METRICS_PORT (`src/metrics/server.ts`).
 * Names follow Prometheus conventions: `intake_` prefix, base units (seconds, bytes), `_total` for
 * counters; labels have few values (route templates, never paths or ids).
 */
export interface ApiMetrics {
  registry: Registry;
  /** By method, route template (`/v3/rest/recordings/:recordingId`, or `unmatched`) and status. */
  httpRequestDuration: Histogram<'method' | 'route' | 'status'>;
  /** Agent events by what ingest did with them: accepted (new), deduplicated, revised. */
  agentEvents: Counter<'outcome'>;
  /** Agent events in ingest requests that were refused, by errorCode. */
  agentEventsRejected: Counter<'reason'>;
  /** Requests refused by a rate limit (429), by limit. */
  rateLimitRejections: Counter<'limit'>;
  /** Bytes of direct uploads received by this process's tus endpoint. */
  uploadBytes: Counter;
  /** OTLP spans received, by what became of them: stored (their messages), rejected, ignored (no GenAI messages). */
  otlpSpans: Counter<'outcome'>;
  otlpLogRecords: Counter<'outcome'>;
}

export function createApiMetrics(o: { pool?: DatabasePool; processMetrics?: boolean } = {}): ApiMetrics {
  const registry = new Registry();
  // Process CPU, memory, event-loop lag, GC (`process_*`, `nodejs_*`).
  if (o.processMetrics ?? true) collectDefaultMetrics({ register: registry });
  const registers = [registry];
  if (o.pool) {
    const pool = o.pool;
    new Gauge({
      name: 'intake_db_pool_connections',
      help: 'PostgreSQL pool connections of this process: acquired (in use), idle, and waiting (clients waiting for one).',
      labelNames: ['state'],
      registers,
      collect() {
        const s = pool.state();
        this.set({ state: 'acquired' }, s.acquiredConnections);
        this.set({ state: 'idle' }, s.idleConnections);
        this.set({ state: 'waiting' }, s.waitingClients);
      },
    });
  }
  return {
    registry,
    httpRequestDuration: new Histogram({
      name: 'intake_http_request_duration_seconds',
      help: 'HTTP requests by method, route template and status, and how long they took.',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    agentEvents: new Counter({
      name: 'intake_agent_events_total',
      help: 'Agent events ingested, by outcome: accepted, deduplicated, revised.',
      labelNames: ['outcome'],
      registers,
    }),
    agentEventsRejected: new Counter({
      name: 'intake_agent_events_rejected_total',
      help: 'Agent events in refused ingest requests, by errorCode.',
      labelNames: ['reason'],
      registers,
    }),
    rateLimitRejections: new Counter({
      name: 'intake_rate_limit_rejections_total',
      help: 'Requests refused with 429 by a rate limit, by limit.',
      labelNames: ['limit'],
      registers,
    }),
    uploadBytes: new Counter({ name: 'intake_upload_bytes_total', help: 'Bytes of direct (tus) uploads received.', registers }),
    otlpSpans: new Counter({
      name: 'intake_otlp_spans_total',
      help: 'OTLP spans received, by outcome: stored (their GenAI messages), rejected (counted in partialSuccess), ignored (no GenAI messages).',
      labelNames: ['outcome'],
      registers,
    }),
    otlpLogRecords: new Counter({
      name: 'intake_otlp_log_records_total',
      help: 'OTLP log records received, by outcome: stored (GenAI messages, Claude Code events), rejected (counted in partialSuccess), ignored (neither).',
      labelNames: ['outcome'],
      registers,
    }),
  };
}
