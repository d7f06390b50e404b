import { collectDefaultMetrics, Registry } from 'prom-client';

/**
 * The worker process's metrics: its own (prom-client: process CPU, memory, event-loop lag) and the
 * Temporal SDK's runtime metrics (`temporal_*`: task slots, poll and schedule-to-start latencies,
 * workflow and activity outcomes), which the SDK's core exports on a loopback port of its own. One
 * scrape of METRICS_PORT returns both.
 */
export interface WorkerMetrics {
  registry: Registry;
  /** Where the SDK's exporter listens (`127.0.0.1:port`), for `Runtime.install`. */
  sdkBindAddress: string;
  /** Both sets, in the Prometheus text format. */
  scrape(): Promise<string>;
}

export function createWorkerMetrics(o: { sdkPort: number }): WorkerMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const sdkBindAddress = `127.0.0.1:${o.sdkPort}`;
  return {
    registry,
    sdkBindAddress,
    async scrape() {
      const own = await registry.metrics();
      // The SDK's exporter answers once the Runtime is installed; until then (or if it fails) only ours.
      const sdk = await fetch(`http://${sdkBindAddress}/metrics`, { signal: AbortSignal.timeout(5_000) })
        .then((res) => (res.ok ? res.text() : ''), () => '');
      return sdk ? `${own}\n${sdk}` : own;
    },
  };
}

/** The SDK's Prometheus exporter, named by Prometheus conventions (`_total`, base units, seconds). */
export function sdkPrometheus(bindAddress: string) {
  return { prometheus: { bindAddress, countersTotalSuffix: true, unitSuffix: true, useSecondsForDurations: true } };
}
