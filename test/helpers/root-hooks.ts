import { Runtime } from '@temporalio/worker';
import { createLogger } from '../../src/logger.js';
import { sdkLogger, sdkLogging } from '../../src/temporal/sdk-logger.js';
import { stopTestStack } from './stack.js';

// Test workers log only warnings; the harness owns shutdown (no SDK signal handlers).
Runtime.install({ shutdownSignals: [], logger: sdkLogger(createLogger('warn', 'intake-test')), telemetryOptions: { logging: sdkLogging('warn') } });

after(async function () {
  this.timeout(60_000);
  await stopTestStack();
});
