/**
 * What a history shard count costs the production Temporal server on this machine: for each count,
 * a fresh cluster on its own PostgreSQL, how long it takes to serve, then its CPU (user + system,
 * from /proc) and resident memory while idle for 60 s, and the rows its shards keep. Not a test:
 * the figures docs/operations.md quotes ("Temporal's history shard count").
 *
 *   npx tsx test/topology/measure-history-shards.ts 4 512 1024
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort, sleep } from '../../src/dev/net.js';
import { startLocalPostgres } from '../../src/dev/postgres.js';
import { startTemporalCluster } from '../../harness/temporal-cluster.js';

const TICKS_PER_SECOND = 100;

async function cpuSeconds(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

const counts = process.argv.slice(2).map(Number);
for (const shards of counts.length ? counts : [4, 512, 1024]) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'intake-shards-'));
  const postgres = await startLocalPostgres({ dataDir: path.join(dir, 'pg'), port: await freePort(), persistent: false, fast: false });
  try {
    const started = Date.now();
    const cluster = await startTemporalCluster({
      postgresUrl: postgres.url('postgres'),
      dir: path.join(dir, 'temporal'),
      historyShards: shards,
    });
    const serveSeconds = (Date.now() - started) / 1000;
    await sleep(15_000);
    const cpu0 = await cpuSeconds(cluster.pid);
    await sleep(60_000);
    const idleCpu = ((await cpuSeconds(cluster.pid)) - cpu0) / 60;
    const rss = await rssMiB(cluster.pid);
    const db = new pg.Client({ connectionString: postgres.url('temporal') });
    await db.connect();
    const rows = (await db.query<{ n: string }>('SELECT count(*) AS n FROM shards')).rows[0]!.n;
    await db.end();
    await cluster.stop();
    console.log(
      JSON.stringify({
        shards,
        serveSeconds: +serveSeconds.toFixed(1),
        idleCpuCores: +idleCpu.toFixed(3),
        rssMiB: Math.round(rss),
        shardRows: Number(rows),
      }),
    );
  } finally {
    await postgres.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
