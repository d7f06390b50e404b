import { loadConfig, type Config } from '../../src/config.js';

export const TEST_SIGNING_SECRET = 'test-signing-secret-test-signing-secret-0123456789';

/** A config for tests: the real parser, with test values. */
export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', SIGNING_SECRET: TEST_SIGNING_SECRET, ...env });
}
