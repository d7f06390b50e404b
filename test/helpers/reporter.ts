// Mocha's spec reporter, closed by one plain summary line
// ("mocha: N passed, N failed, N skipped") that CI systems read without
// knowing mocha's own "N passing" wording.
import Mocha from 'mocha';

export default class SpecWithSummary extends Mocha.reporters.Spec {
  constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions) {
    super(runner, options);
    runner.once(Mocha.Runner.constants.EVENT_RUN_END, () => {
      const { passes, failures, pending } = this.stats;
      process.stdout.write(`mocha: ${passes} passed, ${failures} failed, ${pending} skipped\n`);
    });
  }
}
