import { strict as assert } from 'node:assert';
import { testConfig } from '../../../harness/config.js';
import { endpointPolicy, endpointUrlProblems, webhookSecretKeys } from '../../../src/webhooks/endpoints.js';

/** The pure rules of webhook endpoint management: which URLs an endpoint may have, and the keys its secret is sealed under. */
describe('webhook endpoint URLs', () => {
  const development = { requireHttps: false };
  const production = { requireHttps: true };
  const problem = (url: string, policy = development) => endpointUrlProblems(url, policy).map((p) => p.message);

  it('accepts absolute http and https URLs with ports, paths, queries and IP literals', () => {
    for (const url of [
      'https://hooks.example.com/intake',
      'http://localhost:3000/webhooks',
      'https://hooks.example.com:8443/a/b?team=7&x=%20y',
      'http://10.0.0.7:9000/',
      'http://[::1]:8080/hook',
      'HTTPS://HOOKS.EXAMPLE.COM/',
    ]) {
      assert.deepEqual(problem(url), [], url);
    }
    assert.deepEqual(problem('https://hooks.example.com/', production), []);
  });

  it('names the problem of each refused URL, on the given path', () => {
    const cases: [string, string][] = [
      ['hooks.example.com/intake', 'must be an absolute URL (https://host/path)'],
      ['/relative/path', 'must be an absolute URL (https://host/path)'],
      ['https:hooks.example.com', 'must be an absolute URL (https://host/path)'],
      ['https:\\\\hooks.example.com\\x', 'must be an absolute URL (https://host/path)'],
      ['https://', 'must be an absolute URL (https://host/path)'],
      ['ftp://hooks.example.com/', 'must be an http or https URL'],
      ['javascript:alert(1)', 'must be an http or https URL'],
      ['https://hooks.example.com/a b', 'must not contain whitespace (percent-encode it)'],
      [' https://hooks.example.com/', 'must not contain whitespace (percent-encode it)'],
      ['https://user:pass@hooks.example.com/', 'must not contain credentials (user:password@); authenticate deliveries by their signature'],
      ['https://user@hooks.example.com/', 'must not contain credentials (user:password@); authenticate deliveries by their signature'],
      ['https://@hooks.example.com/', 'must not contain credentials (user:password@); authenticate deliveries by their signature'],
      ['https://hooks.example.com/#', 'must not have a fragment (#…): it is never sent to the server'],
      ['https://hooks.example.com/path#part', 'must not have a fragment (#…): it is never sent to the server'],
    ];
    for (const [url, message] of cases) assert.deepEqual(endpointUrlProblems(url, development, 'url'), [{ path: 'url', message }], url);
  });

  it('an @ after the host is part of the path, not credentials', () => {
    assert.deepEqual(problem('https://hooks.example.com/users/@me?by=a@b'), []);
  });

  it('with NODE_ENV=production, https only', () => {
    assert.deepEqual(problem('http://hooks.example.com/', production), ['must be an https URL (this deployment delivers only over TLS)']);
    assert.deepEqual(endpointPolicy({ env: 'production' }), production);
    assert.deepEqual(endpointPolicy({ env: 'development' }), development);
    assert.deepEqual(endpointPolicy({ env: 'test' }), development);
  });

  it('seals under the payload keys of the configuration (TEMPORAL_PAYLOAD_KEYS, else derived from SIGNING_SECRET)', () => {
    assert.deepEqual(
      webhookSecretKeys(testConfig()).map((k) => k.id),
      ['signing-secret'],
    );
    const listed = testConfig({
      TEMPORAL_PAYLOAD_KEYS: `k2:${Buffer.alloc(32, 2).toString('base64')},k1:${Buffer.alloc(32, 1).toString('base64')}`,
    });
    assert.deepEqual(
      webhookSecretKeys(listed).map((k) => k.id),
      ['k2', 'k1'],
    );
    assert.throws(
      () => webhookSecretKeys({ temporal: { ...testConfig().temporal, payloadKeys: undefined } }),
      /TEMPORAL_PAYLOAD_KEYS or SIGNING_SECRET/,
    );
  });
});
