import type { DataConverter } from '@temporalio/common';
import { temporalDataConverter } from '../src/temporal/codec.js';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, type Config } from '../src/config.js';

/** Media of tests that do not choose a directory (the test worker's default too). */
export const TEST_MEDIA_DIR = path.join(os.tmpdir(), `intake-test-media-${process.pid}`);

export const TEST_SIGNING_SECRET = 'test-signing-secret-test-signing-secret-0123456789';
export const TEST_OPERATOR_TOKEN = 'test-operator-token-test-operator-token-0123456789';

/**
 * A config for tests: the real parser, with test values. Ingest secrets are looked up on every
 * request (no cache), so that a revocation in a test applies to its next request; the cache has its own test.
 */
export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    SIGNING_SECRET: TEST_SIGNING_SECRET,
    OPERATOR_TOKEN: TEST_OPERATOR_TOKEN,
    STORAGE_DIR: TEST_MEDIA_DIR,
    AGENT_CREDENTIAL_CACHE_SECONDS: '0',
    AGENT_WORKFLOW_SIGNAL_SECONDS: '0',
    ...env,
  });
}

/** The payload codec of the test configuration: what every test client and worker encrypts with. */
export function testDataConverter(): DataConverter {
  return temporalDataConverter(testConfig().temporal.payloadKeys);
}
