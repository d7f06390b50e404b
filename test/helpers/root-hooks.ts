import { Runtime } from '@temporalio/worker';
import { createLogger } from '../../src/logger.js';
import { sdkLogger } from '../../src/temporal/sdk-logger.js';
import { stopTestStack } from '../../harness/stack.js';

// Test workers log only warnings; the harness owns shutdown (no SDK signal handlers).
// The core's own lines are not forwarded here: forwarding keeps the process alive until the Runtime shuts down.
Runtime.install({ shutdownSignals: [], logger: sdkLogger(createLogger('warn', 'intake-test')) });

after(async function () {
  this.timeout(60_000);
  await stopTestStack();
});
