/**
 * The one shape of a benchmark result file (bench/results/<name>.json): `benchmark` (the name
 * `npm run bench -- <name>` runs), `measuredAt`, the benchmark's own figures, then `commit`,
 * `machine` and `postgres`. Results recorded before this shape existed carry `provenance`, which
 * says what was reconstructed from git and what the run did not record (null).
 */
import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT } from '../src/paths.js';

export const RESULTS_DIR = path.join(PROJECT_ROOT, 'bench', 'results');

export interface Commit {
  sha: string;
  /** The code differed from the commit (results written by earlier runs do not count); null: not recorded. */
  dirty: boolean | null;
}

export interface Machine {
  hostname: string | null;
  cpus: number;
  cpuModel: string | undefined;
  memoryGiB: number;
  node: string;
  platform: string;
}

export interface BenchResult {
  benchmark: string;
  measuredAt: string;
  provenance?: string;
  commit: Commit;
  machine: Machine;
  postgres: { fsync: boolean; synchronousCommit: string } | null;
  [figure: string]: unknown;
}

const git = (...args: string[]) => execFileSync('git', args, { cwd: PROJECT_ROOT, encoding: 'utf8' }).trim();

export function currentCommit(): Commit {
  return {
    sha: git('rev-parse', 'HEAD'),
    dirty: git('status', '--porcelain', '--untracked-files=no', '--', '.', ':!bench/results') !== '',
  };
}

export function currentMachine(): Machine {
  return {
    hostname: os.hostname(),
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    platform: `${os.platform()} ${os.arch()}`,
  };
}

/** A benchmark's figures in the result shape; `benchmark`, `name` or `measuredAt` it returned itself are replaced. */
export function resultRecord(
  name: string,
  figures: Record<string, unknown>,
  context: Pick<BenchResult, 'commit' | 'machine' | 'postgres'> & { measuredAt?: string },
): BenchResult {
  const { benchmark: _benchmark, name: _name, measuredAt, provenance, commit: _c, machine: _m, postgres: _p, ...rest } = figures;
  return {
    benchmark: name,
    measuredAt: context.measuredAt ?? (typeof measuredAt === 'string' ? measuredAt : new Date().toISOString()),
    ...(typeof provenance === 'string' ? { provenance } : {}),
    ...rest,
    commit: context.commit,
    machine: context.machine,
    postgres: context.postgres,
  };
}

export async function writeResult(result: BenchResult): Promise<string> {
  const file = path.join(RESULTS_DIR, `${result.benchmark}.json`);
  await writeFile(file, `${JSON.stringify(result, null, 2)}\n`);
  return file;
}
