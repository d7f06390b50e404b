/**
 * `npm run test:all`: the unit, integration and replay suites as TEST_SHARDS mocha processes at
 * once (3 by default), each a whole ordinary run (its own test stack: embedded PostgreSQL and the
 * Temporal dev server, its own root hooks and reporter), on a share of the files. One run keeps a
 * core about 60% busy (it waits on servers, retries and timers), so three fill a 2-core machine: on
 * this one the suite took 1,105 s in two shards and 622 s in three.
 *
 * Files are dealt longest first to the least loaded shard, by the seconds each took in the last
 * recorded run (test/file-seconds.json; a file not in it counts by its size); TEST_RECORD_TIMES=1
 * writes this run's times there. The first shard's output streams as it runs; the others' is kept
 * and printed whole after it, shard after shard, then one summary line over all of them (`mocha: N passed, N failed, N skipped`); the
 * exit code is non-zero when any shard failed. A failed shard's failures (mocha's "N failing" section) are
 * printed again after that line, so the end of the output (all a CI log may keep) names them. Arguments after `--` go to every shard's mocha (a
 * `--grep`, say). TEST_SHARDS=1 runs one mocha over every file, as before.
 */
import { spawn } from 'node:child_process';
import { createWriteStream, globSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { PROJECT_ROOT } from '../src/paths.js';

const GLOBS = ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts', 'test/replay/**/*.test.ts'];
const TIMES_FILE = path.join(PROJECT_ROOT, 'test', 'file-seconds.json');
/** A file without a recorded time: seconds per KiB of source (the suites' median is near this). */
const SECONDS_PER_KIB = 0.4;

const shards = Math.max(1, Number(process.env.TEST_SHARDS ?? 3));
const passThrough = process.argv.slice(2);
const files = GLOBS.flatMap((g) => globSync(g, { cwd: PROJECT_ROOT })).sort();
const recorded: Record<string, number> = (() => {
  try {
    return JSON.parse(readFileSync(TIMES_FILE, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
})();
const weight = (file: string) => recorded[file] ?? (statSync(path.join(PROJECT_ROOT, file)).size / 1024) * SECONDS_PER_KIB;

// Longest first, each to the shard with the least so far.
const plan = Array.from({ length: shards }, () => ({ files: [] as string[], seconds: 0 }));
for (const file of [...files].sort((a, b) => weight(b) - weight(a))) {
  const target = plan.reduce((least, s) => (s.seconds < least.seconds ? s : least));
  target.files.push(file);
  target.seconds += weight(file);
}

const dir = await mkdtemp(path.join(os.tmpdir(), 'intake-test-shards-'));
const started = performance.now();
process.stdout.write(
  `test:all: ${files.length} files in ${shards} shard(s) (${plan.map((s) => `${s.files.length} files, ~${Math.round(s.seconds)} s`).join('; ')})\n`,
);
const results = await Promise.all(
  plan.map(async (shard, i) => {
    const log = path.join(dir, `shard-${i + 1}.log`);
    const times = path.join(dir, `shard-${i + 1}-times.json`);
    const out = createWriteStream(log);
    const child = spawn(
      process.execPath,
      [path.join(PROJECT_ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js'), '--config', '.mocharc.json', ...passThrough, ...shard.files],
      { cwd: PROJECT_ROOT, env: { ...process.env, MOCHA_FILE_TIMES: times }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child.stdout.pipe(out, { end: false });
    child.stderr.pipe(out, { end: false });
    if (i === 0) {
      child.stdout.pipe(process.stdout, { end: false });
      child.stderr.pipe(process.stderr, { end: false });
    }
    const code = await new Promise<number>((resolve) => child.once('close', (c, signal) => resolve(c ?? (signal ? 1 : 0))));
    await new Promise<void>((resolve) => out.end(resolve));
    const text = await readFile(log, 'utf8');
    const seconds = ((performance.now() - started) / 1000).toFixed(0);
    const summary = /^mocha: (\d+) passed, (\d+) failed, (\d+) skipped$/m.exec(text);
    const fileTimes = await readFile(times, 'utf8').then(
      (t) => JSON.parse(t) as Record<string, number>,
      (): Record<string, number> => ({}),
    );
    return { code, counts: summary ? summary.slice(1).map(Number) : null, fileTimes, text, seconds };
  }),
);
for (const [i, r] of results.entries()) {
  process.stdout.write(`\n--- test:all shard ${i + 1} of ${shards}: exit ${r.code} after ${r.seconds} s\n`);
  if (i > 0) process.stdout.write(r.text);
}
await rm(dir, { recursive: true, force: true });

if (process.env.TEST_RECORD_TIMES === '1') {
  const merged = Object.fromEntries(
    Object.entries(Object.assign({}, ...results.map((r) => r.fileTimes)) as Record<string, number>).sort(([a], [b]) => a.localeCompare(b)),
  );
  writeFileSync(TIMES_FILE, `${JSON.stringify(merged, null, 2)}\n`);
}
const total = (k: number) => results.reduce((sum, r) => sum + (r.counts?.[k] ?? 0), 0);
const [passed, failed, skipped] = [total(0), total(1), total(2)];
const broken = results.filter((r) => r.counts === null).length;
process.stdout.write(
  `\ntest:all: ${shards} shard(s) in ${((performance.now() - started) / 1000).toFixed(0)} s${broken ? `; ${broken} shard(s) ended without a summary` : ''}\n` +
    `mocha: ${passed} passed, ${failed} failed, ${skipped} skipped\n`,
);
for (const [i, r] of results.entries()) {
  const failing = /^ {2}\d+ failing$[\s\S]*?(?=^mocha: )/m.exec(stripVTControlCharacters(r.text));
  if (failing) process.stdout.write(`\n--- test:all shard ${i + 1}: failures again\n${failing[0]}`);
}
process.exitCode = results.some((r) => r.code !== 0) ? 1 : 0;
