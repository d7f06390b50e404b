/**
 * Hostile OTLP exports against the API's event loop and memory (issue 50): the API's production
 * entrypoint in its own process, `/healthz` read in a steady loop (8 in flight), first alone (the
 * reference, measured in the same run), then while 2 clients send, back to back:
 *   - the review's export: 7.8 KB of gzip inflating to 4,000,000 empty log records (before issue 50:
 *     14 s each, /healthz waiting up to 5.5 s, 5.1 GiB resident with two senders; now a 413);
 *   - the worst export the caps allow on the event loop's side: OTLP_MAX_RECORDS_PER_EXPORT records
 *     that are Claude Code's (so they come back from the body thread), each with as many attributes
 *     as OTLP_MAX_VALUES_PER_EXPORT leaves, and no session.id (rejected, so nothing is stored and
 *     the database is not what is measured).
 * Reported per phase: /healthz p50/p99/max and the p99 against the reference, the exports' statuses
 * and times, and the API's resident memory idle and at its peak. The OTLP record rate limit is off
 * here: it would stop the loop, and what one export costs is what is measured.
 */
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import protobuf from 'protobufjs';
import { createDatabasePool } from '../src/db/pool.js';
import { CLAUDE_CODE_SCOPE } from '../src/domain/otel/claude-code.js';
import { OTLP_DESCRIPTOR } from '../src/otel/otlp-descriptor.generated.js';
import { loadConfig } from '../src/config.js';
import { startApiProcess } from '../harness/api-process.js';
import { createTestAgentApp } from '../harness/agents.js';
import { TEST_SIGNING_SECRET } from '../harness/config.js';
import { createTestOrg } from '../harness/fixtures.js';
import { emptyLogRecords } from '../harness/otlp-wire.js';
import { createTestDatabase, stopTestStack, testStack } from '../harness/stack.js';
import { readLoad, rssMiB, rssSampler } from './hostile-input.js';
import { percentile } from './stats.js';

const PHASE_SECONDS = 20;
const SENDERS = 2;

/** The review's export: 4,000,000 empty log records (two bytes each), gzipped. */
function reviewExport(): Buffer {
  return gzipSync(emptyLogRecords(4_000_000));
}

/** The most values the caps let back onto the event loop: Claude Code records without session.id, full of attributes. */
function worstAllowed(): Buffer {
  const { otlp } = loadConfig({ NODE_ENV: 'test', SIGNING_SECRET: TEST_SIGNING_SECRET });
  const records = otlp.maxItems;
  // Each attribute is two values (KeyValue, AnyValue); each record one more, and the envelope a few.
  const attributes = Math.min(otlp.maxAttributes, Math.floor((otlp.maxValues - 8) / records / 2) - 1);
  const LOGS = protobuf.Root.fromJSON(OTLP_DESCRIPTOR).lookupType('opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest');
  const record = {
    eventName: 'claude_code.api_request',
    attributes: Array.from({ length: attributes }, (_, i) => ({ key: `attribute.${i}`, value: { intValue: i } })),
  };
  return Buffer.from(
    LOGS.encode(
      LOGS.fromObject({
        resourceLogs: [{ scopeLogs: [{ scope: { name: CLAUDE_CODE_SCOPE }, logRecords: new Array(records).fill(record) }] }],
      }),
    ).finish(),
  );
}

export async function benchHostileOtlp(): Promise<Record<string, unknown>> {
  const databaseUrl = await createTestDatabase();
  const pool = await createDatabasePool(databaseUrl);
  const { temporal } = await testStack();
  const api = await startApiProcess({
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_TASK_QUEUE: `bench-hostile-otlp-${randomUUID()}`,
    SIGNING_SECRET: TEST_SIGNING_SECRET,
    LOG_LEVEL: 'warn',
    AGENT_INGEST_RATE_LIMIT_PER_MINUTE: '0',
    OTLP_RECORD_RATE_LIMIT_PER_MINUTE: '0',
  });
  const pid = api.child.pid!;
  try {
    const org = await createTestOrg(pool);
    const app = await createTestAgentApp(pool, org, `bench-otlp-${randomUUID()}`);
    const health = async () => {
      const res = await fetch(`${api.url}/healthz`);
      if (res.status !== 200) throw new Error(`/healthz answered ${res.status}`);
      await res.arrayBuffer();
    };
    await readLoad(health, 3);
    const idleMiB = await rssMiB(pid);
    const alone = await readLoad(health, PHASE_SECONDS);

    /** /healthz for a phase while SENDERS clients send `body` back to back. */
    const phase = async (body: Buffer, headers: Record<string, string>) => {
      const peak = rssSampler(pid, await rssMiB(pid));
      const statuses: Record<string, number> = {};
      const exportMs: number[] = [];
      let sending = true;
      const senders = Array.from({ length: SENDERS }, async () => {
        while (sending) {
          const t = performance.now();
          const res = await fetch(`${api.url}/otel/v1/logs`, {
            method: 'POST',
            headers: { 'X-Service-Agent-Key': app.secret, ...headers },
            body,
          });
          await res.arrayBuffer();
          exportMs.push(performance.now() - t);
          statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        }
      });
      const reads = await readLoad(health, PHASE_SECONDS);
      sending = false;
      await Promise.all(senders);
      const sorted = exportMs.sort((a, b) => a - b);
      return {
        bodyBytes: body.length,
        healthz: reads,
        p99Ratio: Number((reads.p99 / alone.p99).toFixed(2)),
        exports: { requests: sorted.length, statuses, p50Ms: percentile(sorted, 50), maxMs: Number(sorted.at(-1)!.toFixed(1)) },
        apiPeakRssMiB: Math.round(await peak.stop()),
      };
    };
    const review = await phase(reviewExport(), { 'Content-Type': 'application/x-protobuf', 'Content-Encoding': 'gzip' });
    const worst = await phase(worstAllowed(), { 'Content-Type': 'application/x-protobuf' });
    return {
      name: 'hostile-otlp',
      setup: { phaseSeconds: PHASE_SECONDS, readers: 8, senders: SENDERS, read: 'GET /healthz' },
      healthzAlone: alone,
      reviewExport: review,
      worstAllowedExport: worst,
      apiRssMiB: { idle: Math.round(idleMiB), peak: Math.max(review.apiPeakRssMiB, worst.apiPeakRssMiB) },
    };
  } finally {
    await api.stop();
    await pool.end();
    await stopTestStack();
  }
}
