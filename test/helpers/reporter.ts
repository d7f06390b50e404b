// Mocha's spec reporter, closed by one plain summary line
// ("mocha: N passed, N failed, N skipped") that CI systems read without
// knowing mocha's own "N passing" wording.
//
// It also bounds the wait for the process to exit: mocha runs without `--exit`, so a resource a
// test leaves open (a worker started by a hook that mocha had already failed on a timeout, a
// timer) would keep the run alive until CI's hard limit and lose its result. After the summary,
// an unref'd timer names what is still open and exits (with mocha's verdict: its exit handler sets
// the code from the failure count).
import Mocha from 'mocha';

/** How long the process may take to exit by itself after the last test. */
const EXIT_GRACE_MS = 60_000;

export default class SpecWithSummary extends Mocha.reporters.Spec {
  constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions) {
    super(runner, options);
    runner.once(Mocha.Runner.constants.EVENT_RUN_END, () => {
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
