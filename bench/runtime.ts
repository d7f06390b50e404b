import { DefaultLogger, Runtime } from '@temporalio/worker';

let installed = false;

/**
 * The benchmark process's Temporal runtime, quiet (errors only) and deaf to signals (the benchmark
 * stops its workers itself). Installed once: `npm run bench` runs several benchmarks in one process,
 * and Temporal's runtime is a singleton that may be installed only once.
 */
export function installQuietRuntime(): void {
  if (installed) return;
  Runtime.install({ shutdownSignals: [], logger: new DefaultLogger('ERROR') });
  installed = true;
}
