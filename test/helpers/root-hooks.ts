import { Runtime } from '@temporalio/worker';
import { sdkLogger } from '../../src/temporal/sdk-logger.js';
import { stopTestStack } from './stack.js';

// Test workers log only warnings; the harness owns shutdown (no SDK signal handlers).
Runtime.install({ shutdownSignals: [], logger: sdkLogger('info') });

after(async function () {
  this.timeout(60_000);
  await stopTestStack();
});
