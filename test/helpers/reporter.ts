// Mocha's spec reporter, closed by one plain summary line
// ("mocha: N passed, N failed, N skipped") that CI systems read without
// knowing mocha's own "N passing" wording, after the ten files that took longest (wall time from
// a file's first hook or test to its last, hooks included), which is where a slow run's time went
// (MOCHA_FILE_TIMES=<file> writes every file's).
//
// It also bounds the wait for the process to exit: mocha runs without `--exit`, so a resource a
// test leaves open (a worker started by a hook that mocha had already failed on a timeout, a
// timer) would keep the run alive until CI's hard limit and lose its result. After the summary,
// an unref'd timer names what is still open and exits (with mocha's verdict: its exit handler sets
// the code from the failure count).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import Mocha from 'mocha';

/** How long the process may take to exit by itself after the last test. */
const EXIT_GRACE_MS = 60_000;
/** How many of the slowest files the summary names. */
const SLOWEST_FILES = 10;

export default class SpecWithSummary extends Mocha.reporters.Spec {
  constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions) {
    super(runner, options);
    const fileTimes = new Map<string, { first: number; last: number }>();
    const mark = (file: string | undefined): void => {
      if (file === undefined) return;
      const now = performance.now();
      const seen = fileTimes.get(file);
      if (seen === undefined) fileTimes.set(file, { first: now, last: now });
      else seen.last = now;
    };
    const { EVENT_SUITE_BEGIN, EVENT_SUITE_END, EVENT_HOOK_BEGIN, EVENT_HOOK_END, EVENT_TEST_END, EVENT_RUN_END } = Mocha.Runner.constants;
    runner.on(EVENT_SUITE_BEGIN, (suite: Mocha.Suite) => mark(suite.file));
    runner.on(EVENT_SUITE_END, (suite: Mocha.Suite) => mark(suite.file));
    runner.on(EVENT_HOOK_BEGIN, (hook: Mocha.Hook) => mark(hook.file));
    runner.on(EVENT_HOOK_END, (hook: Mocha.Hook) => mark(hook.file));
    runner.on(EVENT_TEST_END, (test: Mocha.Test) => mark(test.file));
    runner.once(EVENT_RUN_END, () => {
      const times = [...fileTimes.entries()]
        .map(([file, { first, last }]) => ({ file: path.relative(process.cwd(), file), seconds: (last - first) / 1000 }))
        .sort((a, b) => b.seconds - a.seconds);
      // MOCHA_FILE_TIMES=<file>: every file's seconds, as JSON (test/run-all.ts balances its shards with them).
      if (process.env.MOCHA_FILE_TIMES)
        writeFileSync(
          process.env.MOCHA_FILE_TIMES,
          JSON.stringify(Object.fromEntries(times.map((t) => [t.file, Number(t.seconds.toFixed(1))]))),
        );
      const slowest = times.slice(0, SLOWEST_FILES);
      if (slowest.length > 1) {
        process.stdout.write(`mocha: the ${slowest.length} slowest files\n`);
        for (const { file, seconds } of slowest) process.stdout.write(`  ${seconds.toFixed(1).padStart(7)} s  ${file}\n`);
      }
      const { passes, failures, pending } = this.stats;
      process.stdout.write(`mocha: ${passes} passed, ${failures} failed, ${pending} skipped\n`);
      setTimeout(() => {
        const open = process.getActiveResourcesInfo().filter((kind) => kind !== 'TTYWrap');
        process.stderr.write(`mocha: still running ${EXIT_GRACE_MS / 1000} s after the last test; open resources: ${open.join(', ')}\n`);
        process.exit();
      }, EXIT_GRACE_MS).unref();
    });
  }
}
