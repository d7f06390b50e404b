import { strict as assert } from 'node:assert';
import { readFile } from 'node:fs/promises';
import { ConfigError, ENV_VARIABLES, loadConfig, required } from '../../src/config.js';
import { configReference, envExample, withReference } from '../../src/config-reference.js';
import { resolveFromRoot } from '../../src/paths.js';

describe('config', () => {
  it('fills embedded defaults from an empty environment', () => {
    const c = loadConfig({});
    assert.equal(c.http.port, 8080);
    assert.equal(c.database.url, undefined);
    assert.equal(c.database.devPort, 54329);
    assert.equal(c.temporal.address, undefined);
    assert.equal(c.temporal.namespace, 'default');
    assert.equal(c.temporal.taskQueue, 'intake');
    assert.equal(c.temporal.devUiPort, 8233);
    assert.equal(c.auth.accessTokenTtlSeconds, 3600);
    assert.equal(c.http.bodyLimitBytes, 1024 * 1024);
  });

  it('parses and types given values', () => {
    const c = loadConfig({
      PORT: '9090',
      TEMPORAL_TLS: 'true',
      DATABASE_URL: 'postgres://u:p@db:5432/intake',
      TEMPORAL_ADDRESS: 'temporal:7233',
    });
    assert.equal(c.http.port, 9090);
    assert.equal(c.temporal.tls, true);
    assert.equal(c.database.url, 'postgres://u:p@db:5432/intake');
    assert.equal(c.temporal.address, 'temporal:7233');
  });

  it('treats empty strings as unset', () => {
    assert.equal(loadConfig({ DATABASE_URL: '' }).database.url, undefined);
  });

  const bad: [Record<string, string>, RegExp][] = [
    [{ PORT: 'eighty' }, /PORT/],
    [{ PORT: '70000' }, /PORT/],
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL: must be a postgres/],
    [{ TEMPORAL_ADDRESS: 'no-port' }, /TEMPORAL_ADDRESS: must be host:port/],
    [{ SIGNING_SECRET: 'short' }, /SIGNING_SECRET: must be at least 32 characters/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL/],
    [{ TEMPORAL_TLS: 'yes' }, /TEMPORAL_TLS/],
  ];
  for (const [env, message] of bad) {
    it(`fails naming the variable for ${JSON.stringify(env)}`, () => {
      assert.throws(
        () => loadConfig(env),
        (e: unknown) => e instanceof ConfigError && message.test(e.message),
      );
    });
  }

  it('names every bad variable at once', () => {
    assert.throws(() => loadConfig({ PORT: 'x', LOG_LEVEL: 'y' }), /PORT.*LOG_LEVEL|LOG_LEVEL.*PORT/);
  });

  it('required() names the variable that supplies a missing value', () => {
    assert.throws(() => required(undefined, 'DATABASE_URL'), /DATABASE_URL is required/);
    assert.equal(required('x', 'A'), 'x');
  });

  it('chooses the signal extractor: local by default; openai needs a base URL', () => {
    assert.deepEqual(loadConfig({}).signalExtractor, { kind: 'local' });
    assert.throws(() => loadConfig({ SIGNAL_EXTRACTOR: 'openai' }), /SIGNAL_EXTRACTOR_BASE_URL/);
    assert.deepEqual(
      loadConfig({ SIGNAL_EXTRACTOR: 'openai', SIGNAL_EXTRACTOR_BASE_URL: 'http://llm.internal/v1', SIGNAL_EXTRACTOR_API_KEY: 'k' })
        .signalExtractor,
      {
        kind: 'openai',
        baseUrl: 'http://llm.internal/v1',
        apiKey: 'k',
        model: 'gpt-4o-mini',
        timeoutMs: 20_000,
      },
    );
    assert.throws(() => loadConfig({ SIGNAL_EXTRACTOR: 'magic' }), /SIGNAL_EXTRACTOR/);
  });

  it('upstream OpenID Connect sign-in: off by default; the issuer, client id and secret all or none', () => {
    assert.equal(loadConfig({}).signIn.oidc, undefined);
    const org = '0b9c1f5e-8a0e-4f57-9a4c-3f1e2d5b6a70';
    const base = {
      OIDC_ISSUER: 'https://id.example.com',
      OIDC_CLIENT_ID: 'intake',
      OIDC_CLIENT_SECRET: 's3cret',
      OIDC_ORGANIZATIONS: ` ${org} ,`,
    };
    assert.deepEqual(loadConfig(base).signIn.oidc, {
      issuer: 'https://id.example.com',
      clientId: 'intake',
      clientSecret: 's3cret',
      organizationIds: [org],
      displayName: 'single sign-on',
    });
    assert.throws(
      () => loadConfig({ ...base, OIDC_CLIENT_SECRET: undefined }),
      (e: Error) => e instanceof ConfigError && /OIDC_CLIENT_SECRET \(with OIDC_ISSUER\) is required/.test(e.message),
    );
    assert.throws(() => loadConfig({ ...base, OIDC_ISSUER: undefined }), /OIDC_ISSUER \(with OIDC_CLIENT_ID\) is required/);
    assert.throws(() => loadConfig({ ...base, OIDC_ISSUER: 'not a url' }), /OIDC_ISSUER/);
    // The organizations it serves are named: a company's provider never signs in another tenant's users.
    assert.throws(() => loadConfig({ ...base, OIDC_ORGANIZATIONS: undefined }), /OIDC_ORGANIZATIONS \(with OIDC_ISSUER\) is required/);
    assert.throws(
      () => loadConfig({ ...base, OIDC_ORGANIZATIONS: `${org},acme` }),
      /OIDC_ORGANIZATIONS: organization ids \(UUIDs\), comma-separated; not one: acme/,
    );
  });

  it('reads the session processing settings', () => {
    const c = loadConfig({ AGENT_BILLING_RECHECK_SECONDS: '5', AGENT_ANALYSIS_CREDIT_COST: '3', AGENT_SESSION_HISTORY_LIMIT: '500' });
    assert.deepEqual(
      [c.agents.billingRecheckSeconds, c.agents.analysisCreditCost, c.agents.historyLimit, c.agents.retentionSweepMinutes],
      [5, 3, 500, 60],
    );
    assert.throws(() => loadConfig({ AGENT_SESSION_HISTORY_LIMIT: '10' }), /AGENT_SESSION_HISTORY_LIMIT/);
  });

  it('a transaction pooler: DATABASE_SESSION_URL defaults to DATABASE_URL, and transaction mode requires it', () => {
    const direct = 'postgres://intake@db:5432/intake';
    const pooler = 'postgres://intake@pgbouncer:6432/intake';
    const plain = loadConfig({ DATABASE_URL: direct });
    assert.deepEqual([plain.database.url, plain.database.sessionUrl, plain.database.poolMode], [direct, direct, 'session']);
    const pooled = loadConfig({ DATABASE_URL: pooler, DATABASE_SESSION_URL: direct, DATABASE_POOL_MODE: 'transaction' });
    assert.deepEqual([pooled.database.url, pooled.database.sessionUrl, pooled.database.poolMode], [pooler, direct, 'transaction']);
    assert.throws(
      () => loadConfig({ DATABASE_URL: pooler, DATABASE_POOL_MODE: 'transaction' }),
      (e: unknown) => e instanceof ConfigError && /DATABASE_SESSION_URL: required with DATABASE_POOL_MODE=transaction/.test(e.message),
    );
    assert.throws(() => loadConfig({ DATABASE_POOL_MODE: 'statement' }), /DATABASE_POOL_MODE/);
    assert.throws(() => loadConfig({ DATABASE_SESSION_URL: 'mysql://x' }), /DATABASE_SESSION_URL: must be a postgres/);
  });
});

describe('the configuration reference (docs/configuration.md)', () => {
  it('is the table generated from the config schema: `npm run docs:config` after changing src/config.ts', async () => {
    const doc = await readFile(resolveFromRoot('docs/configuration.md'), 'utf8');
    assert.equal(doc, withReference(doc));
    const table = configReference();
    for (const name of ENV_VARIABLES) assert.match(table, new RegExp(`^\\| \`${name}\` \\|`, 'm'));
    // Ranges and choices come from the schema itself.
    assert.match(table, /^\| `PORT` \| `8080` \| integer 0–65535 \|/m);
    assert.match(table, /^\| `API_PROCESSES` \| `1` \| integer 1–64 \|/m);
    assert.match(table, /^\| `METRICS_PORT` \| `9464` \| `off` or integer 0–65535 \|/m);
  });

  it('is .env.example too, every variable commented out at its default', async () => {
    const example = await readFile(resolveFromRoot('.env.example'), 'utf8');
    assert.equal(example, envExample());
    for (const name of ENV_VARIABLES) assert.match(example, new RegExp(`^# ${name}=`, 'm'));
    assert.match(example, /^# API port \(integer 0–65535\)\n# PORT=8080$/m);
  });
});
