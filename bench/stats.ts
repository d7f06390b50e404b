/** Latency summary of one benchmark phase. */
export interface Summary {
  requests: number;
  concurrency: number;
  seconds: number;
  throughputPerSecond: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
}

export function percentile(sorted: number[], p: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return Number(sorted[i]!.toFixed(2));
}

/** Runs `task(i)` `total` times with `concurrency` in flight; times each call. */
export async function load(total: number, concurrency: number, task: (i: number) => Promise<void>): Promise<Summary> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < total; i = next++) {
        const t = performance.now();
        await task(i);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    requests: total,
    concurrency,
    seconds: Number(seconds.toFixed(3)),
    throughputPerSecond: Number((total / seconds).toFixed(1)),
    latencyMs: {
      p50: percentile(sorted, 50),
      p90: percentile(sorted, 90),
      p99: percentile(sorted, 99),
      max: percentile(sorted, 100),
      mean: Number((latencies.reduce((a, b) => a + b, 0) / latencies.length).toFixed(2)),
    },
  };
}
