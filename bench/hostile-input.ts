/**
 * Hostile bodies against the API's memory and the other requests' latency (issue 18): the API's
 * production entrypoint in its own process, a steady load of small reads (8 in flight), first alone
 * (the reference, measured in the same run), then while 4 clients keep sending 16 MiB recording
 * creates whose `folderIds` are 8 million zeros (each a 400 of under 2 KB). Reported: p50/p99 of the
 * reads in both phases and their ratio, the hostile requests' statuses, and the API's resident memory
 * (sampled every 50 ms from /proc) idle and at its peak.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createDatabasePool } from '../src/db/pool.js';
import { startApiProcess } from '../harness/api-process.js';
import { TEST_SIGNING_SECRET } from '../harness/config.js';
import { createTestOrg } from '../harness/fixtures.js';
import { createTestDatabase, stopTestStack, testStack } from '../harness/stack.js';
import { percentile } from './stats.js';

const PHASE_SECONDS = 20;
const READERS = 8;
const HOSTILE = 4;

export async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

/** `READERS` loops of `read` for `seconds`: latencies in ms. */
export async function readLoad(
  read: () => Promise<void>,
  seconds: number,
): Promise<{ requests: number; p50: number; p99: number; max: number; perSecond: number }> {
  const latencies: number[] = [];
  const until = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: READERS }, async () => {
      while (performance.now() < until) {
        const t = performance.now();
        await read();
        latencies.push(performance.now() - t);
      }
    }),
  );
  const sorted = latencies.sort((a, b) => a - b);
  return {
    requests: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: Number(sorted.at(-1)!.toFixed(1)),
    perSecond: Math.round(sorted.length / seconds),
  };
}

/** The process's peak resident memory, sampled every 50 ms from /proc until `stop`. */
export function rssSampler(pid: number, startMiB: number): { stop(): Promise<number> } {
  let peak = startMiB;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peak = Math.max(peak, await rssMiB(pid));
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  return {
    async stop() {
      sampling = false;
      await sampler;
      return peak;
    },
  };
}

export async function benchHostileInput(): Promise<Record<string, unknown>> {
  const databaseUrl = await createTestDatabase();
  const pool = await createDatabasePool(databaseUrl);
  const { temporal } = await testStack();
  const api = await startApiProcess({
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_TASK_QUEUE: `bench-hostile-${randomUUID()}`,
    SIGNING_SECRET: TEST_SIGNING_SECRET,
    LOG_LEVEL: 'warn',
    RECORDING_CREATE_RATE_LIMIT_PER_MINUTE: '0',
  });
  const pid = api.child.pid!;
  try {
    const org = await createTestOrg(pool);
    const headers = { 'X-Service-Api-Key': org.apiKey };
    const read = async () => {
      const res = await fetch(`${api.url}/v3/rest/organization`, { headers });
      if (res.status !== 200) throw new Error(`read answered ${res.status}`);
      await res.arrayBuffer();
    };
    // Warm-up, then the reference.
    await readLoad(read, 3);
    const idleMiB = await rssMiB(pid);
    const alone = await readLoad(read, PHASE_SECONDS);

    const zeros = 8_000_000;
    const body = Buffer.from(`{"record":{"externalId":"hostile"},"folderIds":[${'0,'.repeat(zeros - 1)}0]}`);
    const peak = rssSampler(pid, idleMiB);
    const statuses: Record<string, number> = {};
    const hostileMs: number[] = [];
    let largestAnswer = 0;
    let attacking = true;
    const attackers = Array.from({ length: HOSTILE }, async () => {
      while (attacking) {
        const t = performance.now();
        const res = await fetch(`${api.url}/v3/rest/recordings`, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json' },
          body,
        });
        const answer = await res.arrayBuffer();
        hostileMs.push(performance.now() - t);
        largestAnswer = Math.max(largestAnswer, answer.byteLength);
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      }
    });
    const underAttack = await readLoad(read, PHASE_SECONDS);
    attacking = false;
    await Promise.all(attackers);
    const peakMiB = await peak.stop();
    const sortedHostile = hostileMs.sort((a, b) => a - b);
    return {
      name: 'hostile-input',
      setup: {
        phaseSeconds: PHASE_SECONDS,
        readers: READERS,
        hostileClients: HOSTILE,
        hostileBodyMiB: Number((body.length / 2 ** 20).toFixed(1)),
        folderIds: zeros,
        read: 'GET /v3/rest/organization',
      },
      readsAlone: alone,
      readsUnderAttack: underAttack,
      p99Ratio: Number((underAttack.p99 / alone.p99).toFixed(2)),
      hostile: { requests: sortedHostile.length, statuses, p50Ms: percentile(sortedHostile, 50), largestAnswerBytes: largestAnswer },
      apiRssMiB: { idle: Math.round(idleMiB), peak: Math.round(peakMiB) },
    };
  } finally {
    await api.stop();
    await pool.end();
    await stopTestStack();
  }
}
