import { DefaultLogger, Runtime } from '@temporalio/worker';
import { stopTestStack } from './stack.js';

// Test workers log only warnings; the harness owns shutdown (no SDK signal handlers).
Runtime.install({ shutdownSignals: [], logger: new DefaultLogger('WARN') });

after(async function () {
  this.timeout(60_000);
  await stopTestStack();
});
