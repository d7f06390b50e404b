import { Registry } from 'prom-client';
import { createActivityMetrics, type ActivityMetrics } from '../../src/metrics/activity-metrics.js';

/** The worker's activity metrics on a registry of their own, with a reader of one sample. */
export function testActivityMetrics(): {
  metrics: ActivityMetrics;
  value: (name: string, labels?: Record<string, string>) => Promise<number>;
} {
  const registry = new Registry();
  return {
    metrics: createActivityMetrics(registry),
    value: (name, labels = {}) => sampleValue(registry, name, labels),
  };
}

/** A sample's value in a registry (0 when absent); `name` may be a histogram's `_count` or `_sum`. */
export async function sampleValue(registry: Registry, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name.replace(/_(count|sum)$/, ''));
  const values = (metric?.values ?? []) as { value: number; labels: Record<string, string | number>; metricName?: string }[];
  const found = values.find(
    (v) => (v.metricName ?? metric?.name) === name && Object.entries(labels).every(([k, want]) => String(v.labels[k]) === want),
  );
  return found?.value ?? 0;
}
