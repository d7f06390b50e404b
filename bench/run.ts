/**
 * `npm run bench [-- foundation|feedback-records|agent-ingest|agent-processing|recordings|mcp-upload|media|uploads|hostile-input|dashboard ...] [-- --skip-tests]`: runs the benchmarks (all by
 * default) and writes each result to bench/results/<name>.json, with the machine it ran on.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT } from '../src/paths.js';
import { benchAgentIngest } from './agent-ingest.js';
import { benchAgentProcessing } from './agent-processing.js';
import { benchDashboard } from './dashboard.js';
import { benchFeedback } from './feedback.js';
import { benchFoundation } from './foundation.js';
import { benchHostileInput } from './hostile-input.js';
import { benchMcpUpload } from './mcp-upload.js';
import { benchMedia } from './media.js';
import { benchRecordings } from './recordings.js';
import { benchUploads } from './uploads.js';
import { useDurablePostgres } from '../harness/stack.js';

const args = process.argv.slice(2);
const wanted = args.filter((a) => !a.startsWith('--'));
const all: Record<string, () => Promise<Record<string, unknown>>> = {
  foundation: () => benchFoundation({ tests: !args.includes('--skip-tests') }),
  'feedback-records': () => benchFeedback(),
  'agent-ingest': () => benchAgentIngest(),
  'agent-processing': () => benchAgentProcessing(),
  recordings: () => benchRecordings(),
  'mcp-upload': () => benchMcpUpload(),
  media: () => benchMedia(),
  uploads: () => benchUploads(),
  'hostile-input': () => benchHostileInput(),
  dashboard: () => benchDashboard(),
};
// Every benchmark measures with the durability `npm start` runs with: fsync on, on both sides.
useDurablePostgres();
const git = (...a: string[]) => execFileSync('git', a, { cwd: PROJECT_ROOT, encoding: 'utf8' }).trim();
// Dirty: the code differs from the commit (results written by earlier runs do not count).
const commit = {
  sha: git('rev-parse', 'HEAD'),
  dirty: git('status', '--porcelain', '--untracked-files=no', '--', '.', ':!bench/results') !== '',
};
const machine = {
  hostname: os.hostname(),
  cpus: os.cpus().length,
  cpuModel: os.cpus()[0]?.model,
  memoryGiB: Math.round(os.totalmem() / 2 ** 30),
  node: process.version,
  platform: `${os.platform()} ${os.arch()}`,
};
await mkdir(path.join(PROJECT_ROOT, 'bench', 'results'), { recursive: true });
for (const [name, run] of Object.entries(all)) {
  if (wanted.length && !wanted.includes(name)) continue;
  const result = { ...(await run()), commit, machine, postgres: { fsync: true, synchronousCommit: 'on' } };
  await writeFile(path.join(PROJECT_ROOT, 'bench', 'results', `${name}.json`), `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}
