/**
 * What the fleet benchmarks share (the soak, bench/soak.ts, and the noisy tenant,
 * bench/noisy-tenant.ts): the fleet of production processes (harness/fleet.ts) with an HTTPS webhook
 * receiver it trusts, tenants made on it, the capacity of the mixed load measured on it, and the lag
 * probe.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmod, mkdtemp, readFile } from 'node:fs/promises';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import type { DatabasePool } from 'slonik';
import { Connection, WorkflowClient } from '@temporalio/client';
import { createApplication, issueCredential } from '../src/agents/applications.js';
import { loadConfig } from '../src/config.js';
import { sessionShards } from '../src/db/repositories/agent-sessions.js';
import { sessionDrainerWorkflowId } from '../workflows/session-drainer/contract.js';
import { createDatabasePool } from '../src/db/pool.js';
import { sleep } from '../src/dev/net.js';
import { userMessage } from '../harness/agents.js';
import { createTestOrg } from '../harness/fixtures.js';
import { isRunning, startFleet, type Fleet, type FleetProc } from '../harness/fleet.js';
import { pidOfWorkerIdentity } from '../src/temporal/worker.js';
import { MixedLoad, Replicas, type Tenant } from './mixed-load.js';
import { postgresCpuMs, postmasterPid, processCpuMs } from './stats.js';

const round = (value: number, digits = 1) => Number(value.toFixed(digits));

/** Rate limits raised past any load here: a benchmark that measures what survives faults, not the limits. */
export const RAISED_RATE_LIMITS = {
  AGENT_INGEST_RATE_LIMIT_PER_MINUTE: '100000000',
  FEEDBACK_RATE_LIMIT_PER_MINUTE: '100000000',
  RECORDING_CREATE_RATE_LIMIT_PER_MINUTE: '100000000',
  MANAGEMENT_RATE_LIMIT_PER_MINUTE: '100000000',
};

export interface Receiver {
  url: string;
  /** When each webhook-id first arrived (epoch ms). */
  firstSeen: Map<string, number>;
  close(): Promise<void>;
}

/**
 * A receiver that answers 200 at once and keeps when each webhook-id first arrived: over HTTPS, as
 * production requires of receivers, with a certificate made here that the fleet's processes trust
 * (NODE_EXTRA_CA_CERTS).
 */
async function startReceiver(tls: { key: Buffer; cert: Buffer }): Promise<Receiver> {
  const firstSeen = new Map<string, number>();
  const server = createServer(tls, (req, res) => {
    req.resume();
    req.on('end', () => {
      const id = String(req.headers['webhook-id']);
      if (!firstSeen.has(id)) firstSeen.set(id, Date.now());
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    firstSeen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A self-signed certificate for 127.0.0.1 (openssl), its key and its PEM file's path. */
async function receiverCertificate(dir: string): Promise<{ key: Buffer; cert: Buffer; certFile: string }> {
  const keyFile = path.join(dir, 'receiver-key.pem');
  const certFile = path.join(dir, 'receiver-cert.pem');
  // prettier-ignore
  await promisify(execFile)('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2',
    '-subj', '/CN=bench receiver', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', keyFile, '-out', certFile,
  ]);
  return { key: await readFile(keyFile), cert: await readFile(certFile), certFile };
}

export interface LoadFleet {
  dir: string;
  fleet: Fleet;
  pool: DatabasePool;
  /** A plain pg pool for the benchmark's own reads (errors during a PostgreSQL restart are the caller's to retry). */
  raw: pg.Pool;
  receiver: Receiver;
  apiUrls: string[];
  replicas: Replicas;
  /** Makes a tenant: an organization with credits, an agent application, a feedback source and a webhook endpoint for every type. */
  newTenant(): Promise<Tenant>;
  stop(): Promise<void>;
}

/** The fleet (two API replicas, two workers) with the receiver, `extraEnv` on top of docker-compose.yml's environment. */
export async function startLoadFleet(o: { name: string; extraEnv?: Record<string, string>; pooler?: boolean }): Promise<LoadFleet> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `intake-${o.name}-`));
  await chmod(dir, 0o755);
  const tls = await receiverCertificate(dir);
  const fleet = await startFleet({
    dir,
    apis: ['api-a', 'api-b'],
    workers: ['worker-a', 'worker-b'],
    ...(o.pooler === undefined ? {} : { pooler: o.pooler }),
    extraEnv: {
      // The receiver is on this machine.
      WEBHOOK_ALLOWED_PRIVATE_NETWORKS: '127.0.0.0/8',
      NODE_EXTRA_CA_CERTS: tls.certFile,
      LOG_LEVEL: 'warn',
      ...o.extraEnv,
    },
  });
  const pool = await createDatabasePool(fleet.databaseUrl, { poolSize: 2 });
  const raw = new pg.Pool({ connectionString: fleet.databaseUrl, max: 4 });
  raw.on('error', () => undefined);
  const receiver = await startReceiver(tls);
  const apiUrls = fleet.procs.filter((p) => p.role === 'api').map((p) => p.url!);
  return {
    dir,
    fleet,
    pool,
    raw,
    receiver,
    apiUrls,
    replicas: new Replicas(apiUrls),
    async newTenant() {
      const org = await createTestOrg(pool, { credits: 1_000_000_000 });
      const app = await createApplication(pool, { organizationId: org.organizationId, name: 'bench', agentKey: 'bench' });
      const { secret } = await issueCredential(pool, app);
      const as = { 'X-Service-Api-Key': org.apiKey, 'content-type': 'application/json' };
      const create = async <T>(what: string, body: unknown): Promise<T> => {
        const res = await fetch(`${apiUrls[0]}/v3/rest/${what}`, { method: 'POST', headers: as, body: JSON.stringify(body) });
        if (res.status !== 201) throw new Error(`POST ${what}: ${res.status} ${await res.text()}`);
        return (await res.json()) as T;
      };
      const source = await create<{ id: string }>('feedback-sources', { name: 'Support', type: 'api' });
      const endpoint = await create<{ id: string; secret: string }>('webhook-endpoints', {
        url: receiver.url,
        description: 'the bench receiver',
      });
      return {
        organizationId: org.organizationId,
        apiKey: org.apiKey,
        agentKey: 'bench',
        agentSecret: secret,
        sourceId: source.id,
        endpointId: endpoint.id,
        endpointSecret: endpoint.secret,
      };
    },
    async stop() {
      await receiver.close();
      await pool.end().catch(() => undefined);
      await raw.end().catch(() => undefined);
      await fleet.stop();
    },
  };
}

/** CPU milliseconds so far of each live process of the fleet, the Temporal server, PgBouncer and PostgreSQL (the whole cluster). */
export async function fleetCpuMs(fleet: Fleet): Promise<Record<string, number>> {
  const cpu: Record<string, number> = {};
  for (const proc of fleet.procs.filter(isRunning)) cpu[proc.name] = await processCpuMs(proc.child.pid);
  cpu['temporal-server'] = await processCpuMs(fleet.cluster.pid);
  cpu.pgbouncer = await processCpuMs(fleet.pgbouncer.pid);
  cpu.postgres = await postgresCpuMs(await postmasterPid(fleet.postgres.dataDir));
  return cpu;
}

/** Each process's share of one core between two readings of CPU milliseconds (fleetCpuMs) `wallMs` apart. */
export function coresBetween(before: Record<string, number>, after: Record<string, number>, wallMs: number): Record<string, number> {
  return Object.fromEntries(Object.entries(after).map(([name, ms]) => [name, round((ms - (before[name] ?? 0)) / wallMs, 3)]));
}

export interface Capacity {
  eventsPerSecond: number;
  events: number;
  seconds: number;
  /** Each process's share of one core over the phase: where the capacity went. */
  cores: Record<string, number>;
}

/**
 * The mix's capacity: `load` closed loop at `concurrency` for `seconds`, then until all of it is
 * checked, analysed and deleted; the events over that whole time.
 */
export async function measureCapacity(
  load: MixedLoad,
  fleet: Fleet,
  o: { seconds: number; concurrency: number; settleTimeoutMs: number },
): Promise<Capacity> {
  const before = load.counts.events;
  const started = performance.now();
  const cpuBefore = await fleetCpuMs(fleet);
  await load.runClosed({ concurrency: o.concurrency, seconds: o.seconds });
  await load.finish();
  await load.settle({ all: true, timeoutMs: o.settleTimeoutMs });
  const seconds = (performance.now() - started) / 1000;
  const cpuAfter = await fleetCpuMs(fleet);
  const events = load.counts.events - before;
  return {
    eventsPerSecond: round(events / seconds),
    events,
    seconds: round(seconds),
    cores: coresBetween(cpuBefore, cpuAfter, seconds * 1000),
  };
}

/**
 * The live worker of the fleet whose drainer runs `sessionId`'s shard now (the last worker of its
 * shard's pending drain call, from the shard's workflow), or null when none is known (the call is
 * between two runs, or its worker is gone).
 */
export async function workerDrainingSession(load: LoadFleet, sessionId: string): Promise<FleetProc | null> {
  const { fleet } = load;
  // The shard count and the task queue the fleet's workers run with (their environment, read as they read it).
  const config = loadConfig(fleet.env);
  const shards = config.agents.drainShards;
  const shard = (await sessionShards(load.pool, [sessionId], shards)).get(sessionId);
  if (shard === undefined) return null;
  const connection = await Connection.connect({ address: fleet.cluster.address });
  try {
    const client = new WorkflowClient({ connection, namespace: fleet.cluster.namespace });
    const described = await client.getHandle(sessionDrainerWorkflowId(config.temporal.taskQueue, shard, shards)).describe();
    const pid = pidOfWorkerIdentity(described.raw.pendingActivities?.[0]?.lastWorkerIdentity);
    return fleet.procs.find((p) => p.role === 'worker' && p.child.pid === pid && isRunning(p)) ?? null;
  } finally {
    await connection.close();
  }
}

export interface Probe {
  /** When the probe was sent (epoch ms). */
  sentAt: number;
  lagSeconds: number;
}

/**
 * The lag probe: one event every `everyMs` into a session of its own in `tenant`, timed from its
 * POST (retried through faults) until the session's watermark passes it (polled every 20 ms), while
 * `running()`. Resolves when it stops.
 */
export async function probeLag(
  load: MixedLoad,
  raw: pg.Pool,
  tenant: Tenant,
  o: { everyMs: number; running: () => boolean; probes: Probe[]; session?: { id?: string } },
): Promise<void> {
  let sequence = 0;
  const session = `probe-${randomUUID()}`;
  while (o.running()) {
    const next = sleep(o.everyMs);
    sequence++;
    const sentAt = Date.now();
    const res = await load.send(
      'POST',
      '/v3/rest/agent-conversations/ingest',
      { 'X-Service-Agent-Key': tenant.agentSecret },
      { agentKey: tenant.agentKey, externalSessionId: session, events: [userMessage(sequence, `probe ${sequence}`)] },
    );
    if (res.status === 202) {
      if (o.session) o.session.id = res.body?.sessionId;
      for (;;) {
        const done = await raw
          .query<{
            done: boolean;
          }>(`SELECT coalesce(processed_through_sequence, 0) >= $2 AS done FROM agent_sessions WHERE id = $1`, [
            res.body?.sessionId,
            sequence,
          ])
          .then(
            (r) => r.rows[0]?.done === true,
            () => false,
          );
        if (done) break;
        await sleep(20);
      }
      o.probes.push({ sentAt, lagSeconds: round((Date.now() - sentAt) / 1000, 3) });
    }
    await next;
  }
}

/** Waits until none of the endpoints' deliveries is pending (or `timeoutMs` has passed). */
export async function untilDeliveriesMade(raw: pg.Pool, endpointIds: readonly string[], timeoutMs: number): Promise<void> {
  const started = Date.now();
  for (;;) {
    const pending = await raw
      .query<{
        pending: number;
      }>(`SELECT count(*)::int AS pending FROM webhook_deliveries WHERE endpoint_id = ANY($1::uuid[]) AND status = 'pending'`, [
        endpointIds,
      ])
      .then(
        (r) => r.rows[0]!.pending,
        () => null,
      );
    if (pending === 0 || Date.now() - started > timeoutMs) return;
    await sleep(500);
  }
}
