/**
 * `npm run bench [-- foundation|feedback-records|agent-ingest|agent-processing|otlp-ingest|recordings|mcp-upload|media|uploads|hostile-input|hostile-otlp|dashboard|webhook-delivery|data-path|growth|soak|noisy-tenant|pooler|partition-migration ...] [-- --skip-tests] [-- --size S|M|L] [-- --minutes N]`: runs the benchmarks (all by
 * default) and writes each result to bench/results/<name>.json (bench/results-file.ts: with the commit
 * and the machine it ran on), then the summary table of docs/benchmarks.md (bench/summary.ts).
 *
 * `data-path` (bench/data-path.ts): the database's work per agent event in one run (statements,
 * transactions and PostgreSQL CPU per event, from pg_stat_statements and /proc), beside raw inserts
 * of the same rows; ingest latency with and without the worker processing; idle transactions a
 * second; one organization against many; the wake lag of an idle stack. BENCH_DATA_PATH_SIZE=small
 * runs it quickly; its other sizes are in its header.
 *
 * `growth` (bench/growth.ts): the headline figures at each data size up to `--size` (S, 1M events,
 * by default; M 10M; L 50M), filled by the data generator (bench/data-generator.ts), beside S's.
 *
 * `soak` (bench/soak.ts): the fleet under a mixed load at half its capacity for `--minutes` (120 by
 * default; CI runs 10) with faults on a schedule; it fails the run when anything was lost, counted
 * twice or missing.
 *
 * `noisy-tenant` (bench/noisy-tenant.ts): the quiet tenants' lag and webhook p95 on the fleet with
 * and without one tenant sending ten times their load, phases alternating (goal ≤ 1.2×).
 *
 * `pooler` (bench/pooler.ts): the fleet through PgBouncer in transaction mode beside the same fleet
 * straight to PostgreSQL: capacity, lag p95 at one rate, cores and PostgreSQL's backends.
 *
 * `partition-migration` (bench/partition-migration.ts): migrations 0036-0039 and the partition maintainer's
 * first run on 0.1-shaped data of `--size`, with 0.1's inserts going on (decision 0216).
 */
import { mkdir } from 'node:fs/promises';
import { benchAgentIngest } from './agent-ingest.js';
import { benchOtlpIngest } from './otlp-ingest.js';
import { benchAgentProcessing } from './agent-processing.js';
import { benchDashboard } from './dashboard.js';
import { benchDataPath } from './data-path.js';
import { benchFeedback } from './feedback.js';
import { benchFoundation } from './foundation.js';
import { benchGrowth } from './growth.js';
import { isSizeName, SIZES } from './data-generator.js';
import { benchHostileInput } from './hostile-input.js';
import { benchHostileOtlp } from './hostile-otlp.js';
import { benchMcpUpload } from './mcp-upload.js';
import { benchMedia } from './media.js';
import { benchRecordings } from './recordings.js';
import { benchUploads } from './uploads.js';
import { benchWebhookDelivery } from './webhook-delivery.js';
import { benchSoak } from './soak.js';
import { benchNoisyTenant } from './noisy-tenant.js';
import { benchPooler } from './pooler.js';
import { benchPartitionMigration } from './partition-migration.js';
import { currentCommit, currentMachine, resultRecord, RESULTS_DIR, writeResult } from './results-file.js';
import { writeSummary } from './summary.js';
import { useDurablePostgres } from '../harness/stack.js';

const args = process.argv.slice(2);
/** Options that take a value (`--size M`): the value is not a benchmark's name. */
const VALUED = new Set(['--size', '--minutes']);
const wanted = args.filter((a, i) => !a.startsWith('--') && !VALUED.has(args[i - 1] ?? ''));
const optionValue = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const growthSize = optionValue('--size') ?? 'S';
if (!isSizeName(growthSize)) throw new Error(`--size must be one of ${Object.keys(SIZES).join(', ')}`);
const soakMinutes = Number(optionValue('--minutes') ?? 120);
if (!(soakMinutes >= 1)) throw new Error('--minutes must be a number of minutes, at least 1');
const all: Record<string, () => Promise<Record<string, unknown>>> = {
  foundation: () => benchFoundation({ tests: !args.includes('--skip-tests') }),
  'feedback-records': () => benchFeedback(),
  'agent-ingest': () => benchAgentIngest(),
  'agent-processing': () => benchAgentProcessing(),
  'otlp-ingest': () => benchOtlpIngest(),
  recordings: () => benchRecordings(),
  'mcp-upload': () => benchMcpUpload(),
  media: () => benchMedia(),
  uploads: () => benchUploads(),
  'hostile-input': () => benchHostileInput(),
  'hostile-otlp': () => benchHostileOtlp(),
  dashboard: () => benchDashboard(),
  'webhook-delivery': () => benchWebhookDelivery(),
  'data-path': () => benchDataPath(),
  growth: () => benchGrowth({ size: growthSize }),
  soak: () => benchSoak({ minutes: soakMinutes }),
  'noisy-tenant': () => benchNoisyTenant(),
  pooler: () => benchPooler(),
  'partition-migration': () => benchPartitionMigration({ size: growthSize }),
};
// Every benchmark measures with the durability `npm start` runs with: fsync on, on both sides.
useDurablePostgres();
const commit = currentCommit();
const machine = currentMachine();
await mkdir(RESULTS_DIR, { recursive: true });
for (const [name, run] of Object.entries(all)) {
  if (wanted.length && !wanted.includes(name)) continue;
  const figures = await run();
  // A growth run's file names its largest size (growth-M.json holds S and M): a quick S run keeps an M run's file.
  // A soak of other than the default 2 hours (CI's 10 minutes) keeps a file of its own: soak-10min.json.
  const fileName =
    name === 'growth' || name === 'partition-migration'
      ? `${name}-${growthSize}`
      : name === 'soak' && soakMinutes !== 120
        ? `soak-${soakMinutes}min`
        : name;
  const result = resultRecord(fileName, figures, {
    commit,
    machine,
    postgres: { fsync: true, synchronousCommit: 'on' },
  });
  await writeResult(result);
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  // A benchmark that checks what it measured (the soak: nothing lost) lists what failed; the run fails with it.
  const failures = Array.isArray(figures.failures) ? (figures.failures as string[]) : [];
  if (failures.length) {
    process.stderr.write(`${name}: ${failures.length} checks failed:\n${failures.map((f) => `  - ${f}`).join('\n')}\n`);
    process.exitCode = 1;
  }
}
await writeSummary();
