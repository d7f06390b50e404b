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

/** The machine's CPU ticks since boot, busy and total (Linux /proc/stat; null elsewhere). */
export async function cpuTicks(): Promise<{ busy: number; total: number } | null> {
  const { readFile } = await import('node:fs/promises');
  const line = (await readFile('/proc/stat', 'utf8').catch(() => '')).split('\n')[0] ?? '';
  const ticks = line
    .split(/\s+/)
    .slice(1)
    .map(Number)
    .filter((n) => Number.isFinite(n));
  if (ticks.length < 5) return null;
  const total = ticks.reduce((a, b) => a + b, 0);
  const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
  return { busy: total - idle, total };
}

/**
 * Waits until the machine is quiet (under `quietShare` of its CPU for two seconds running) or
 * `timeoutMs` passed; returns the seconds waited. Work a phase set going (workflow runs after their
 * first signal) must not be billed to the next phase.
 */
export async function untilQuiet(quietShare = 0.3, timeoutMs = 60_000): Promise<number> {
  const started = performance.now();
  let calm = 0;
  let before = await cpuTicks();
  if (!before) return 0;
  while (calm < 2 && performance.now() - started < timeoutMs) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const now = await cpuTicks();
    if (!now) return 0;
    calm = busyShare(before, now)! < quietShare ? calm + 1 : 0;
    before = now;
  }
  return Number(((performance.now() - started) / 1000).toFixed(1));
}

/** The machine's busy share (0-1) between two cpuTicks readings; null when either is missing. */
export function busyShare(before: { busy: number; total: number } | null, after: { busy: number; total: number } | null): number | null {
  if (!before || !after) return null;
  return Number(((after.busy - before.busy) / Math.max(1, after.total - before.total)).toFixed(3));
}
