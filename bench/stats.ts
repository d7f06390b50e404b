import { execFileSync } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

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

/** The middle value (the upper one of an even count): the benchmarks that alternate rounds compare these. */
export const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

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
  return summarize(total, concurrency, (performance.now() - started) / 1000, latencies);
}

/** A phase's summary from its duration and its requests' latencies. */
function summarize(total: number, concurrency: number, seconds: number, latencies: readonly number[]): Summary {
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

/** An open-loop phase: the offered and achieved rates beside the latency summary. */
export interface OpenLoopSummary extends Summary {
  mode: 'open-loop';
  offeredPerSecond: number;
  /** Requests that could not be sent when due because `maxInFlight` were outstanding. */
  sentLate: number;
}

/**
 * Open loop (fixed arrival rate): request i is due at start + i / ratePerSecond and is sent then,
 * whatever is still in flight (up to `maxInFlight`; beyond it the generator waits and counts the
 * request as sent late). Each latency runs from when the request was due, not from when it was sent,
 * so a slow response is also charged to the requests it held back: the correction for coordinated
 * omission that wrk2 and HdrHistogram's recordValueWithExpectedInterval make. Closed-loop lanes
 * (`load`) wait for each response before the next request and under-report tails at saturation.
 */
export async function loadAtRate(
  total: number,
  ratePerSecond: number,
  task: (i: number) => Promise<void>,
  o: { maxInFlight?: number } = {},
): Promise<OpenLoopSummary> {
  const maxInFlight = o.maxInFlight ?? 1024;
  const latencies: number[] = [];
  const inFlight = new Set<Promise<void>>();
  let sentLate = 0;
  let failure: Error | undefined;
  const started = performance.now();
  for (let i = 0; i < total && failure === undefined; i++) {
    const due = started + (i * 1000) / ratePerSecond;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    if (inFlight.size >= maxInFlight) {
      sentLate++;
      while (inFlight.size >= maxInFlight) await Promise.race(inFlight);
    }
    const p: Promise<void> = task(i)
      .then(
        () => void latencies.push(performance.now() - due),
        (error: unknown) => void (failure ??= error instanceof Error ? error : new Error(String(error))),
      )
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
  }
  await Promise.all(inFlight);
  if (failure !== undefined) throw failure;
  return {
    ...summarize(total, maxInFlight, (performance.now() - started) / 1000, latencies),
    mode: 'open-loop',
    offeredPerSecond: ratePerSecond,
    sentLate,
  };
}

/** The machine's CPU ticks since boot, busy (steal included) and total, and those the hypervisor stole (Linux /proc/stat; null elsewhere). */
export async function cpuTicks(): Promise<{ busy: number; total: number; steal: number } | null> {
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
  return { busy: total - idle, total, steal: ticks[7] ?? 0 };
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

/** The share (0-1) of the machine's CPU the hypervisor stole between two cpuTicks readings; null when either is missing. */
export function stealShare(before: { steal: number; total: number } | null, after: { steal: number; total: number } | null): number | null {
  if (!before || !after) return null;
  return Number(((after.steal - before.steal) / Math.max(1, after.total - before.total)).toFixed(3));
}

export const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** A process's command name, parent, and utime + stime and cutime + cstime in ticks (null: gone). */
export async function procTimes(pid: number): Promise<{ name: string; ppid: number; own: number; children: number } | null> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  if (!stat) return null;
  // The fields after the command name (which may hold spaces and parentheses): state is field 3.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const field = (n: number) => Number(f[n - 3]);
  const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
  return { name, ppid: field(4), own: field(14) + field(15), children: field(16) + field(17) };
}

/** CPU milliseconds of one process so far (0 when it is gone). */
export async function processCpuMs(pid: number | undefined): Promise<number> {
  const t = pid === undefined ? null : await procTimes(pid);
  return t ? (t.own * 1000) / CLK_TCK : 0;
}

/** The postmaster's pid, from its data directory's postmaster.pid. */
export async function postmasterPid(dataDir: string): Promise<number> {
  return Number((await readFile(path.join(dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
}

/**
 * CPU milliseconds of the whole cluster so far: the postmaster, its live children (backends,
 * checkpointer, WAL writer, ...) and the children it reaped (cutime/cstime), so a backend that
 * exits within a phase still counts.
 */
export async function postgresCpuMs(postmaster: number): Promise<number> {
  const self = await procTimes(postmaster);
  if (!self) throw new Error(`the postmaster (pid ${postmaster}) is gone`);
  let ticks = self.own + self.children;
  for (const t of (await everyProcTimes()).values()) if (t.ppid === postmaster) ticks += t.own;
  return (ticks * 1000) / CLK_TCK;
}

/** procTimes of every process there is now, by pid. */
async function everyProcTimes(): Promise<Map<number, NonNullable<Awaited<ReturnType<typeof procTimes>>>>> {
  const pids = (await readdir('/proc')).filter((d) => /^\d+$/.test(d)).map(Number);
  const all = new Map<number, NonNullable<Awaited<ReturnType<typeof procTimes>>>>();
  await Promise.all(
    pids.map(async (pid) => {
      const t = await procTimes(pid);
      if (t) all.set(pid, t);
    }),
  );
  return all;
}

/** Every process's own CPU ticks so far and its command name (/proc/<pid>/stat). */
export async function everyProcessTicks(): Promise<Map<number, { name: string; ticks: number }>> {
  return new Map([...(await everyProcTimes())].map(([pid, t]) => [pid, { name: t.name, ticks: t.own }]));
}

/** A process's resident and proportional set sizes in MiB (/proc/<pid>/smaps_rollup; null: gone). */
export async function processMemoryMiB(pid: number | undefined): Promise<{ rss: number; pss: number } | null> {
  const text = pid === undefined ? null : await readFile(`/proc/${pid}/smaps_rollup`, 'utf8').catch(() => null);
  if (!text) return null;
  const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0);
  return { rss: kib('Rss') / 1024, pss: kib('Pss') / 1024 };
}

/**
 * The PostgreSQL cluster's memory in MiB: the proportional set sizes of the postmaster and its
 * children summed (their shared buffers counted once, not once per backend as resident sizes would).
 */
export async function postgresMemoryMiB(postmaster: number): Promise<number> {
  const pids = [postmaster, ...[...(await everyProcTimes())].filter(([, t]) => t.ppid === postmaster).map(([pid]) => pid)];
  const sizes = await Promise.all(pids.map((pid) => processMemoryMiB(pid)));
  return sizes.reduce((sum, m) => sum + (m?.pss ?? 0), 0);
}
