import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { createDatabasePool } from '../../../src/db/pool.js';
import type { DomainEvent } from '../../../src/domain/events.js';
import { sendDue, WebhookSender, type WebhookDeliverySettings } from '../../../src/webhooks/delivery.js';
import { webhookAddressPolicy } from '../../../src/webhooks/address-policy.js';
import { sealSecret } from '../../../src/webhooks/secret-box.js';
import { generateWebhookSecret } from '../../../src/webhooks/signing.js';
import { notifyEndpoint } from '../../../src/db/repositories/webhook-deliveries.js';
import { startWebhookWaker, type WebhookWaker } from '../../../src/webhooks/waker.js';
import { WebhookWakes } from '../../../src/webhooks/wakes.js';
import { testConfig } from '../../../harness/config.js';
import { createTestKey, createTestOrg, type TestOrg } from '../../../harness/fixtures.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { runIntake } from '../../helpers/cli.js';
import { createTestDatabase } from '../../../harness/stack.js';
import { waitFor } from '../../../harness/wait.js';
import { LOOPBACK_POLICY, startTestWorker, type TestWorker } from '../../../harness/worker.js';
import {
  attemptsOf,
  createTestEndpoint,
  deliveriesOf,
  record,
  TEST_PAYLOAD_KEYS,
  testGateway,
  TestReceiver,
} from '../../helpers/webhooks.js';

const FAST_RETRIES = [300, 300, 300, 300];

const signalCreated = (org: TestOrg, subjectId = randomUUID()): DomainEvent => ({
  type: 'signal.created',
  organizationId: org.organizationId,
  subjectId,
  payload: { signalId: subjectId, sessionId: randomUUID(), applicationId: randomUUID(), source: 'explicit_feedback' },
});
const processed = (org: TestOrg, sessionId: string, processedThrough: number): DomainEvent => ({
  type: 'agent_session.processed',
  organizationId: org.organizationId,
  subjectId: sessionId,
  payload: { sessionId, applicationId: randomUUID(), processedThrough, status: 'open' },
});

/**
 * The webhook delivery engine (issue 31) on a real PostgreSQL and Temporal: events recorded by
 * recordEvents reach a loopback receiver that verifies them with the npm `standardwebhooks` package.
 */
describe('webhook delivery', function () {
  this.timeout(120_000);
  let pool: DatabasePool;
  let databaseUrl: string;
  let org: TestOrg;
  let worker: TestWorker;
  let waker: WebhookWaker;
  let temporal: Awaited<ReturnType<typeof testGateway>>;
  const receivers: TestReceiver[] = [];

  const receiver = async () => {
    const r = new TestReceiver();
    receivers.push(r);
    return { r, url: await r.listen() };
  };
  const settled = (endpointId: string, n: number) =>
    waitFor(async () => {
      const rows = await deliveriesOf(pool, endpointId);
      return rows.length === n && rows.every((d) => d.status !== 'pending');
    }, 60_000);

  before(async () => {
    databaseUrl = await createTestDatabase();
    pool = await createDatabasePool(databaseUrl);
    org = await createTestOrg(pool);
    worker = await startTestWorker(pool, {
      drainer: false,
      deps: {
        webhooks: { payloadKeys: TEST_PAYLOAD_KEYS, policy: LOOPBACK_POLICY, retryDelaysMs: FAST_RETRIES, attemptTimeoutMs: 1500 },
      },
    });
    temporal = await testGateway();
    waker = await startWebhookWaker({ databaseUrl, pool, temporal: temporal.gateway, taskQueue: worker.webhookTaskQueue, sweepMs: 2000 });
  });
  after(async () => {
    await waker?.close();
    await worker?.stop();
    await temporal?.close();
    for (const r of receivers) await r.close();
    await pool?.end();
  });

  it('delivers an event signed, retrying a 500 and a timeout with the same webhook-id until a 2xx', async () => {
    const { r, url } = await receiver();
    const endpoint = await createTestEndpoint(pool, org.organizationId, { url });
    r.secrets = [endpoint.secret];
    r.answer = (_req, i) => (i === 0 ? 500 : i === 1 ? 'hang' : 204);
    const event = signalCreated(org);
    await record(pool, event);
    assert.ok(await settled(endpoint.id, 1));

    const [delivery] = await deliveriesOf(pool, endpoint.id);
    assert.equal(delivery!.status, 'succeeded');
    assert.equal(delivery!.attempts, 3);
    assert.match(delivery!.id, /^msg_[0-9a-f]{32}$/);
    assert.equal(r.received.length, 3);
    for (const req of r.received) {
      assert.equal(req.id, delivery!.id);
      assert.deepEqual(req.verifiedWith, [0]);
      assert.equal(req.body, r.received[0]!.body);
      assert.equal(req.headers['content-type'], 'application/json');
      assert.match(String(req.headers['user-agent']), /^Intake-Webhooks\//);
    }
    const recordedAt = await pool.oneFirst(sql.type(z.object({ recorded_at: z.string() }))`
      SELECT recorded_at FROM domain_events WHERE id = ${delivery!.event_id}`);
    // The signal does not exist (a made-up id): `data.signal` is null.
    assert.deepEqual(JSON.parse(r.received[0]!.body), {
      type: 'signal.created',
      timestamp: recordedAt,
      data: { ...event.payload, signal: null },
    });
    const attempts = await attemptsOf(pool, delivery!.id);
    assert.deepEqual(
      attempts.map((a) => [a.response_status, a.error]),
      [
        [500, 'HTTP 500'],
        [null, 'timed out after 1.5 s'],
        [204, null],
      ],
    );
    assert.ok(attempts[0]!.response_excerpt!.startsWith('answer 500'));
    assert.equal(Buffer.byteLength(attempts[0]!.response_excerpt!), 1024);
  });

  it('fans an event out once to each enabled endpoint whose event types match, and to nothing else', async () => {
    const { url } = await receiver();
    const all = await createTestEndpoint(pool, org.organizationId, { url });
    const media = await createTestEndpoint(pool, org.organizationId, { url, eventTypes: ['recording.media_ready'] });
    const signals = await createTestEndpoint(pool, org.organizationId, { url, eventTypes: ['signal.created'] });
    const disabled = await createTestEndpoint(pool, org.organizationId, { url, enabled: false });
    const other = await createTestOrg(pool);
    await record(pool, signalCreated(org), signalCreated(org), signalCreated(other));
    const count = (id: string) =>
      pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = ${id}`);
    assert.deepEqual([await count(all.id), await count(media.id), await count(signals.id), await count(disabled.id)], [2, 0, 2, 0]);
    // An organization without endpoints gets its events and no delivery.
    assert.equal(
      await pool.oneFirst(sql.type(z.object({ n: z.number() }))`
        SELECT count(*)::int AS n FROM webhook_deliveries WHERE organization_id = ${other.organizationId}`),
      0,
    );
    assert.ok(await settled(all.id, 2));
  });

  it('keeps the events of one resource in order: a later one waits while an earlier one is retried', async () => {
    const { r, url } = await receiver();
    const endpoint = await createTestEndpoint(pool, org.organizationId, { url, eventTypes: ['agent_session.processed'] });
    r.secrets = [endpoint.secret];
    const sessionId = randomUUID();
    // The first event of the session fails twice; the others would succeed at once.
    let failures = 0;
    r.answer = (req) =>
      (JSON.parse(req.body) as { data: { processedThrough: number } }).data.processedThrough === 1 && failures++ < 2 ? 503 : 200;
    for (let n = 1; n <= 4; n++) await record(pool, processed(org, sessionId, n));
    assert.ok(await settled(endpoint.id, 4));
    const order = r.received.map((req) => (JSON.parse(req.body) as { data: { processedThrough: number } }).data.processedThrough);
    assert.deepEqual(order, [1, 1, 1, 2, 3, 4]);
    assert.ok((await deliveriesOf(pool, endpoint.id)).every((d) => d.status === 'succeeded'));
  });

  it('signs with both secrets after a rotation, so that either verifies', async () => {
    const { r, url } = await receiver();
    const endpoint = await createTestEndpoint(pool, org.organizationId, { url });
    const next = generateWebhookSecret();
    await pool.query(sql.unsafe`
      UPDATE webhook_endpoints SET previous_secret_sealed = secret_sealed, secret_sealed = ${sealSecret(TEST_PAYLOAD_KEYS, next)},
        previous_secret_expires_at = now() + interval '24 hours' WHERE id = ${endpoint.id}`);
    r.secrets = [endpoint.secret, next];
    await record(pool, signalCreated(org));
    assert.ok(await settled(endpoint.id, 1));
    assert.deepEqual(r.received[0]!.verifiedWith, [0, 1]);
    assert.equal(r.received[0]!.signature.split(' ').length, 2);

    // Once the old secret has expired, only the new one signs.
    await pool.query(
      sql.unsafe`UPDATE webhook_endpoints SET previous_secret_expires_at = now() - interval '1 second' WHERE id = ${endpoint.id}`,
    );
    await record(pool, signalCreated(org));
    assert.ok(await settled(endpoint.id, 2));
    assert.deepEqual(r.received[1]!.verifiedWith, [1]);
  });

  it('fails a delivery after its last attempt', async () => {
    const { r, url } = await receiver();
    const endpoint = await createTestEndpoint(pool, org.organizationId, { url });
    r.answer = () => 500;
    await record(pool, signalCreated(org));
    assert.ok(await settled(endpoint.id, 1));
    const [delivery] = await deliveriesOf(pool, endpoint.id);
    assert.deepEqual([delivery!.status, delivery!.attempts, delivery!.last_response_status], ['failed', FAST_RETRIES.length + 1, 500]);
    assert.equal(r.received.length, FAST_RETRIES.length + 1);
    assert.equal(new Set(r.ids()).size, 1);
  });

  describe('sendDue, called directly', () => {
    /** The activity's work without the workflow: the policy and the clock are the test's. */
    const sendOnce = async (endpointId: string, settings: Partial<WebhookDeliverySettings>) => {
      const sender = new WebhookSender({
        payloadKeys: TEST_PAYLOAD_KEYS,
        policy: LOOPBACK_POLICY,
        retryDelaysMs: [0, 0, 0, 0, 0],
        ...settings,
      });
      try {
        return await sendDue({ pool, sender }, endpointId);
      } finally {
        await sender.close();
      }
    };
    /**
     * An endpoint of an organization of its own (the workflows of this file's org do not take its
     * deliveries). Its delivery is due a second ago: the sender compares with its own clock to the
     * millisecond, and one due at PostgreSQL's now() (to the microsecond) could still be in the future
     * for a look made within the same millisecond (a CI run failed so).
     */
    const quietEndpoint = async (url: string) => {
      const own = await createTestOrg(pool);
      const endpoint = await createTestEndpoint(pool, own.organizationId, { url });
      // Deliveries inserted by hand: no notification wakes a workflow for them.
      await pool.query(sql.unsafe`
        INSERT INTO webhook_deliveries (id, endpoint_id, organization_id, event_type, body, next_attempt_at)
        VALUES (${`msg_${randomUUID().replaceAll('-', '')}`}, ${endpoint.id}, ${own.organizationId}, 'webhook.test', '{"type":"webhook.test"}', now() - interval '1 second')`);
      return endpoint;
    };

    it('refuses a loopback or private receiver at connect time unless WEBHOOK_ALLOWED_PRIVATE_NETWORKS allows it', async () => {
      const { r, url } = await receiver();
      const production = webhookAddressPolicy({ allowedNetworks: testConfig().webhooks.allowedPrivateNetworks, allowLoopback: false });
      // A name that resolves to loopback: refused when the socket would dial it.
      const named = await quietEndpoint(url.replace('127.0.0.1', 'receiver.test'));
      const resolver = async () => [{ address: '127.0.0.1', family: 4 }];
      await sendOnce(named.id, { policy: production, resolver });
      let [delivery] = await deliveriesOf(pool, named.id);
      assert.equal(delivery!.status, 'pending');
      assert.match(delivery!.last_error!, /^blocked: receiver\.test resolves to 127\.0\.0\.1, which /);
      // A literal private address: refused before any connection.
      const literal = await quietEndpoint('http://10.1.2.3:9/hooks');
      await sendOnce(literal.id, { policy: production });
      assert.match((await deliveriesOf(pool, literal.id))[0]!.last_error!, /^blocked: address 10\.1\.2\.3 /);
      assert.equal(r.received.length, 0);

      // The operator allows its network: the same delivery goes through.
      const allowed = webhookAddressPolicy({
        allowedNetworks: testConfig({ WEBHOOK_ALLOWED_PRIVATE_NETWORKS: '10.0.0.0/8, 127.0.0.0/8' }).webhooks.allowedPrivateNetworks,
        allowLoopback: false,
      });
      await pool.query(
        sql.unsafe`UPDATE webhook_deliveries SET next_attempt_at = now() - interval '1 second' WHERE endpoint_id = ${named.id}`,
      );
      await sendOnce(named.id, { policy: allowed, resolver });
      [delivery] = await deliveriesOf(pool, named.id);
      assert.equal(delivery!.status, 'succeeded');
      assert.equal(r.received.length, 1);
      // Development (`npm start`) allows loopback; the production policy does not.
      assert.equal(webhookAddressPolicy({ allowedNetworks: [], allowLoopback: true }).problem('127.0.0.1'), null);
      assert.notEqual(production.problem('::1'), null);
      assert.equal(testConfig({ NODE_ENV: 'development' }).webhooks.allowLoopback, true);
      assert.throws(() => testConfig({ WEBHOOK_ALLOWED_PRIVATE_NETWORKS: '10.0.0.0/33' }), /WEBHOOK_ALLOWED_PRIVATE_NETWORKS/);
    });

    it('does not follow a redirect: a 3xx is a failed attempt', async () => {
      const { r, url } = await receiver();
      r.answer = () => 302;
      const endpoint = await quietEndpoint(url);
      await sendOnce(endpoint.id, {});
      const [delivery] = await deliveriesOf(pool, endpoint.id);
      assert.deepEqual(
        [delivery!.status, delivery!.last_response_status, delivery!.last_error],
        ['pending', 302, 'HTTP 302: redirects are not followed'],
      );
    });

    it('disables an endpoint with no successful attempt for 5 days, with the reason; a success clears failing_since', async () => {
      const { r, url } = await receiver();
      r.answer = () => 500;
      const endpoint = await quietEndpoint(url);
      // A second ahead: the delivery's next_attempt_at (PostgreSQL's now(), in microseconds) is due.
      let clock = new Date(Date.now() + 1000);
      const now = () => clock;
      await sendOnce(endpoint.id, { now });
      const health = () =>
        pool.one(
          sql.type(
            z.object({
              enabled: z.boolean(),
              failing_since: z.string().nullable(),
              disabled_reason: z.string().nullable(),
              disabled_at: z.string().nullable(),
            }),
          )`SELECT enabled, failing_since, disabled_reason, disabled_at FROM webhook_endpoints WHERE id = ${endpoint.id}`,
        );
      const start = clock.toISOString();
      assert.deepEqual(await health(), { enabled: true, failing_since: start, disabled_reason: null, disabled_at: null });
      clock = new Date(clock.getTime() + 4 * 86_400_000);
      await sendOnce(endpoint.id, { now });
      assert.equal((await health()).enabled, true);
      clock = new Date(clock.getTime() + 86_400_000);
      const result = await sendOnce(endpoint.id, { now });
      assert.equal(result.endpoint, 'disabled');
      assert.deepEqual(await health(), {
        enabled: false,
        failing_since: start,
        disabled_reason: `failing since ${start}: HTTP 500`,
        disabled_at: clock.toISOString(),
      });
      // A disabled endpoint is not sent to.
      const seen = r.received.length;
      assert.equal((await sendOnce(endpoint.id, { now })).endpoint, 'disabled');
      assert.equal(r.received.length, seen);

      // Another endpoint: a failure starts failing_since, a success clears it.
      const recovering = await quietEndpoint(url);
      await sendOnce(recovering.id, {});
      assert.notEqual(
        await pool.oneFirst(sql.type(z.object({ f: z.string().nullable() }))`
        SELECT failing_since AS f FROM webhook_endpoints WHERE id = ${recovering.id}`),
        null,
      );
      r.answer = () => 200;
      await sendOnce(recovering.id, {});
      assert.equal(
        await pool.oneFirst(
          sql.type(z.object({ f: z.string().nullable() }))`SELECT failing_since AS f FROM webhook_endpoints WHERE id = ${recovering.id}`,
        ),
        null,
      );
    });
  });

  describe('batches and group commits', () => {
    /** An endpoint of an organization of its own with `n` pending test deliveries inserted by hand (no workflow takes them). */
    const endpointWith = async (url: string, n: number, subjects = 0) => {
      const own = await createTestOrg(pool);
      const endpoint = await createTestEndpoint(pool, own.organizationId, { url });
      const subject = (i: number) => (subjects ? `00000000-0000-4000-8000-${String(i % subjects).padStart(12, '0')}` : null);
      for (let i = 0; i < n; i++)
        await pool.query(sql.unsafe`
          INSERT INTO webhook_deliveries (id, endpoint_id, organization_id, event_id, event_type, subject_id, body, next_attempt_at)
          VALUES (${`msg_batch${i}_${randomUUID().slice(0, 8)}`}, ${endpoint.id}, ${own.organizationId}, ${subjects ? i + 1 : null},
            'webhook.test', ${subject(i)}, ${JSON.stringify({ type: 'webhook.test', n: i })}, now() - interval '1 second')`);
      return endpoint;
    };
    const send = async (endpointId: string, settings: Partial<WebhookDeliverySettings>, wakes?: WebhookWakes, signal?: AbortSignal) => {
      const sender = new WebhookSender({ payloadKeys: TEST_PAYLOAD_KEYS, policy: LOOPBACK_POLICY, retryDelaysMs: [0, 0, 0], ...settings });
      try {
        return await sendDue({ pool, sender, ...(wakes ? { wakes } : {}), ...(signal ? { signal } : {}) }, endpointId);
      } finally {
        await sender.close();
      }
    };
    const addDelivery = (endpoint: { id: string }, organizationId: string, n: number) =>
      pool.query(sql.unsafe`
        INSERT INTO webhook_deliveries (id, endpoint_id, organization_id, event_type, body, next_attempt_at)
        VALUES (${`msg_late${n}_${randomUUID().slice(0, 8)}`}, ${endpoint.id}, ${organizationId}, 'webhook.test',
          ${JSON.stringify({ type: 'webhook.test', n })}, now() - interval '1 second')`);
    const organizationOf = (endpointId: string) =>
      pool.oneFirst(sql.type(z.object({ o: z.string() }))`SELECT organization_id AS o FROM webhook_endpoints WHERE id = ${endpointId}`);

    it('a call that has sent lingers for a wake of its process: what is added meanwhile goes out in the same call', async () => {
      const { r, url } = await receiver();
      const endpoint = await endpointWith(url, 2);
      const organizationId = await organizationOf(endpoint.id);
      const wakes = new WebhookWakes();
      assert.equal(wakes.offer(endpoint.id), false, 'no call of it runs here yet: the waker signals the workflow');
      const stop = new AbortController();
      const call = send(endpoint.id, { lingerMs: 30_000 }, wakes, stop.signal);
      await waitFor(async () => r.received.length === 2, 10_000);
      // Committed while the call lingers, then woken as the waker wakes (it offers the wake here first).
      await addDelivery(endpoint, organizationId, 2);
      assert.equal(wakes.offer(endpoint.id), true);
      await waitFor(async () => r.received.length === 3, 10_000);
      // Another, and its wake: whether it comes while the call waits or while it looks, none is lost.
      await addDelivery(endpoint, organizationId, 3);
      assert.equal(wakes.offer(endpoint.id), true);
      await waitFor(async () => r.received.length === 4, 10_000);
      // Still lingering (30 s): one call sent all four, with no workflow round trip between them.
      const state = await Promise.race([
        call.then(() => 'returned'),
        new Promise((resolve) => setTimeout(() => resolve('lingering'), 300)),
      ]);
      assert.equal(state, 'lingering');
      // A worker that stops ends the linger at once.
      stop.abort();
      assert.deepEqual(await call, { endpoint: 'active', attempted: 4, more: false, nextDueAt: null });
      assert.deepEqual(
        r.received.map((x) => (JSON.parse(x.body) as { n: number }).n),
        [0, 1, 2, 3],
      );
      assert.equal(wakes.offer(endpoint.id), false, 'the call has left');
    });

    it('a lingering call sees the endpoint as it is now: a new URL takes the next delivery, disabling ends the call', async () => {
      const first = await receiver();
      const second = await receiver();
      const endpoint = await endpointWith(first.url, 1);
      const organizationId = await organizationOf(endpoint.id);
      const wakes = new WebhookWakes();
      const call = send(endpoint.id, { lingerMs: 30_000 }, wakes);
      second.r.secrets = [endpoint.secret];
      await waitFor(async () => first.r.received.length === 1, 10_000);
      await pool.query(sql.unsafe`UPDATE webhook_endpoints SET url = ${second.url} WHERE id = ${endpoint.id}`);
      await addDelivery(endpoint, organizationId, 1);
      wakes.offer(endpoint.id);
      await waitFor(async () => second.r.received.length === 1, 10_000);
      assert.equal(first.r.received.length, 1);
      assert.deepEqual(second.r.received[0]!.verifiedWith, [0], 'signed with the endpoint’s secret');
      await pool.query(sql.unsafe`UPDATE webhook_endpoints SET enabled = false WHERE id = ${endpoint.id}`);
      await addDelivery(endpoint, organizationId, 2);
      wakes.offer(endpoint.id);
      assert.deepEqual(await call, { endpoint: 'disabled', attempted: 2, more: false, nextDueAt: null });
      assert.equal(second.r.received.length, 1);
    });

    it('a call lingers no longer than its budget, and not at all without wakes or before it has sent', async () => {
      const { r, url } = await receiver();
      const endpoint = await endpointWith(url, 1);
      const wakes = new WebhookWakes();
      // Nothing sent yet and nothing due: it returns at once, lingering only after it has sent.
      const empty = await endpointWith(url, 0);
      assert.deepEqual(await send(empty.id, { lingerMs: 60_000 }, wakes), {
        endpoint: 'active',
        attempted: 0,
        more: false,
        nextDueAt: null,
      });
      // Sent one, then the budget (not the 60 s linger) ends the call.
      assert.deepEqual(await send(endpoint.id, { lingerMs: 60_000, budgetMs: 500 }, wakes), {
        endpoint: 'active',
        attempted: 1,
        more: false,
        nextDueAt: null,
      });
      // Without this process's wakes (no waker here) it returns when nothing is due.
      await addDelivery(endpoint, await organizationOf(endpoint.id), 1);
      assert.deepEqual(await send(endpoint.id, { lingerMs: 60_000 }), { endpoint: 'active', attempted: 1, more: false, nextDueAt: null });
      assert.equal(r.received.length, 2);
      assert.equal(wakes.offer(endpoint.id), false, 'every call has left');
    });

    it('a wake that comes after the last look of a call that sent nothing reads the next due time again, and calls no more at once', async () => {
      const { url } = await receiver();
      const later = await endpointWith(url, 0);
      await pool.query(sql.unsafe`
        INSERT INTO webhook_deliveries (id, endpoint_id, organization_id, event_type, body, next_attempt_at)
        VALUES (${`msg_later_${randomUUID().slice(0, 8)}`}, ${later.id}, ${await organizationOf(later.id)}, 'webhook.test',
          '{"type":"webhook.test"}', now() + interval '1 hour')`);
      const wakes = new WebhookWakes();
      // The call's first look begins before send() returns its promise: this wake comes after it.
      const call = send(later.id, { lingerMs: 0 }, wakes);
      assert.equal(wakes.offer(later.id), true);
      const result = await call;
      // Nothing it could send: the workflow waits until the delivery is due (at least MIN_WAIT_MS), no back-to-back calls.
      assert.equal(result.more, false);
      assert.equal(result.attempted, 0);
      assert.ok(result.nextDueAt !== null && Date.parse(result.nextDueAt) > Date.now() + 3_000_000);
      assert.equal(wakes.offer(later.id), false, 'the call has left: the next wake is signalled');
    });

    it('a batch with a failed attempt ends the call (more: true), so that the next call retries it on schedule', async () => {
      const { r, url } = await receiver();
      const endpoint = await endpointWith(url, 4);
      r.answer = (_x, i) => (i === 1 ? 500 : 200);
      const wakes = new WebhookWakes();
      const result = await send(endpoint.id, { batchSize: 2, concurrency: 1, lingerMs: 60_000 }, wakes);
      assert.deepEqual(result, { endpoint: 'active', attempted: 2, more: true, nextDueAt: result.nextDueAt });
      assert.ok(result.nextDueAt !== null);
      // The next call takes the retry (delay 0) and the rest.
      const next = await send(endpoint.id, { batchSize: 2, concurrency: 1, lingerMs: 0 }, wakes);
      assert.deepEqual(next, { endpoint: 'active', attempted: 3, more: false, nextDueAt: null });
      assert.equal(r.received.length, 5);
    });

    it('one call sends batch after batch while they find deliveries; attempts recorded in group commits, one per delivery', async () => {
      const { r, url } = await receiver();
      const endpoint = await endpointWith(url, 23);
      const result = await send(endpoint.id, { batchSize: 5, concurrency: 3 });
      assert.deepEqual(result, { endpoint: 'active', attempted: 23, more: false, nextDueAt: null });
      assert.equal(r.received.length, 23);
      const rows = await deliveriesOf(pool, endpoint.id);
      assert.deepEqual(new Set(rows.map((d) => `${d.status}/${d.attempts}`)), new Set(['succeeded/1']));
      const attempts = await pool.oneFirst(sql.type(z.object({ n: z.number() }))`
        SELECT count(*)::int AS n FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
        WHERE d.endpoint_id = ${endpoint.id} AND a.response_status = 200`);
      assert.equal(attempts, 23);
    });

    it('keeps the order per subject within one call: a subject’s next event goes only after the previous succeeded', async () => {
      const { r, url } = await receiver();
      // 12 deliveries of 3 subjects (event ids 1..12): each subject has 4, in event order. One batch, 6 in
      // flight, slow answers: only the per-subject order keeps a subject's next from going out before the answer.
      const endpoint = await endpointWith(url, 12, 3);
      const early: number[] = [];
      r.answer = async (x) => {
        const n = (JSON.parse(x.body) as { n: number }).n;
        const previous = r.received.find((y) => (JSON.parse(y.body) as { n: number }).n === n - 3);
        if (n >= 3 && previous?.answeredAt == null) early.push(n);
        await new Promise((resolve) => setTimeout(resolve, 30));
        return 200;
      };
      const result = await send(endpoint.id, { batchSize: 12, concurrency: 6 });
      assert.equal(result.attempted, 12);
      assert.deepEqual(early, []);
      const order = r.received.map((x) => (JSON.parse(x.body) as { n: number }).n);
      for (let subject = 0; subject < 3; subject++) {
        const seen = order.filter((n) => n % 3 === subject);
        assert.deepEqual(seen, [subject, subject + 3, subject + 6, subject + 9]);
      }
    });

    it('a batch that sends looks for the next meanwhile: none goes twice, and a subject’s next waits for the one before', async () => {
      const { r, url } = await receiver();
      const own = await createTestOrg(pool);
      // 8 subjects, two events each (events 0..7 their first, 8..15 their second), recorded before the
      // endpoint exists; their deliveries inserted by hand (no workflow takes them), bodies built at the first
      // look that takes them. Batches of 4 with 2 in flight: the first batch is events 0..3, the next 4..7.
      const subjects = Array.from({ length: 8 }, () => randomUUID());
      for (let i = 0; i < 16; i++) await record(pool, signalCreated(own, subjects[i % 8]));
      const endpoint = await createTestEndpoint(pool, own.organizationId, { url });
      r.secrets = [endpoint.secret];
      await pool.query(sql.unsafe`
        INSERT INTO webhook_deliveries (id, endpoint_id, organization_id, event_id, event_type, subject_id, next_attempt_at)
        SELECT 'msg_ahead' || e.id, ${endpoint.id}, e.organization_id, e.id, e.type, e.subject_id, now() - interval '1 second'
        FROM domain_events e WHERE e.organization_id = ${own.organizationId}`);
      const deliveries = await deliveriesOf(pool, endpoint.id);
      assert.equal(deliveries.length, 16);
      const secondBatch = deliveries.slice(4, 8).map((d) => d.id);
      const bodiesFixed = async () =>
        (await pool.oneFirst(sql.type(z.object({ n: z.number() }))`
            SELECT count(*)::int AS n FROM webhook_deliveries WHERE id = ANY(${sql.array(secondBatch, 'text')}) AND body IS NOT NULL`)) ===
        4;
      const index = new Map(deliveries.map((d, i) => [d.id, i]));
      const early: number[] = [];
      let aheadWhileSending: boolean | null = null;
      r.answer = async (x) => {
        const n = index.get(x.id)!;
        const first = r.received.find((y) => y.id === deliveries[n - 8]?.id);
        if (n >= 8 && first?.answeredAt == null) early.push(n);
        // The first batch's last delivery is answered only once the next batch's bodies are fixed (or 5 s passed).
        if (n === 3) aheadWhileSending = await waitFor(bodiesFixed, 5000, 20);
        await new Promise((resolve) => setTimeout(resolve, 20));
        return 200;
      };
      const result = await send(endpoint.id, { batchSize: 4, concurrency: 2 });
      assert.equal(aheadWhileSending, true, 'the next batch was read and its bodies fixed while the first was in flight');
      assert.deepEqual(result, { endpoint: 'active', attempted: 16, more: false, nextDueAt: null });
      assert.deepEqual(r.received.map((x) => x.id).sort(), deliveries.map((d) => d.id).sort(), 'each delivery once');
      assert.deepEqual(early, [], 'a subject’s second event went only after its first was answered');
      assert.ok((await deliveriesOf(pool, endpoint.id)).every((d) => d.status === 'succeeded' && d.attempts === 1));
    });

    it('a look that fails mid-call fails the call only once the attempts already made are recorded', async () => {
      const { r, url } = await receiver();
      const endpoint = await endpointWith(url, 12);
      // The database refuses the call's second look (the one started while the first batch sends), and
      // records attempts slowly: the first batch's last records are still being written when the failed
      // look is awaited.
      let looks = 0;
      const failing = new Proxy(pool, {
        get(target, prop, receiver) {
          const value = Reflect.get(target, prop, receiver) as unknown;
          if (typeof value !== 'function') return value;
          const call = (...args: unknown[]) => (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          if (prop === 'transaction')
            return async (...args: unknown[]) => {
              await new Promise((resolve) => setTimeout(resolve, 500));
              return call(...args);
            };
          if (prop !== 'any') return value.bind(target);
          return (query: { sql: string }) =>
            query.sql.includes('DISTINCT ON (h.subject_id)') && ++looks === 2 ? Promise.reject(new Error('the look failed')) : call(query);
        },
      });
      const sender = new WebhookSender({ payloadKeys: TEST_PAYLOAD_KEYS, policy: LOOPBACK_POLICY, batchSize: 6, concurrency: 3 });
      try {
        await assert.rejects(sendDue({ pool: failing, sender }, endpoint.id), /the look failed/);
      } finally {
        await sender.close();
      }
      assert.equal(r.received.length, 6, 'the first batch went');
      const rows = await deliveriesOf(pool, endpoint.id);
      assert.equal(rows.filter((d) => d.status === 'succeeded' && d.attempts === 1).length, 6, 'and every attempt of it is recorded');
      assert.equal(rows.filter((d) => d.status === 'pending' && d.attempts === 0).length, 6);
    });

    it('a call does not retry what failed in it; failing_since ends as one attempt at a time would leave it', async () => {
      const { r, url } = await receiver();
      const endpoint = await endpointWith(url, 6);
      const failingSince = () =>
        pool.oneFirst(
          sql.type(z.object({ f: z.string().nullable() }))`SELECT failing_since AS f FROM webhook_endpoints WHERE id = ${endpoint.id}`,
        );
      // One at a time: 200, 500, 200, 500, 500, 200 then (ended by a success) null.
      const answers = [200, 500, 200, 500, 500, 200];
      r.answer = (_x, i) => answers[i] ?? 200;
      let result = await send(endpoint.id, { batchSize: 6, concurrency: 1 });
      assert.equal(result.attempted, 6);
      assert.equal(r.received.length, 6);
      assert.equal(await failingSince(), null);
      // The three that failed are due again (retry delay 0) but only the next call sends them: 500, 500, 500.
      r.answer = () => 500;
      const before = new Date();
      result = await send(endpoint.id, { batchSize: 6, concurrency: 1 });
      assert.equal(result.attempted, 3);
      assert.equal(r.received.length, 9);
      const since = await failingSince();
      assert.ok(since !== null && Date.parse(since) >= before.getTime() - 1);
      // A later run of failures keeps the first one's time.
      result = await send(endpoint.id, { batchSize: 6, concurrency: 1 });
      assert.equal(result.attempted, 3);
      assert.equal(await failingSince(), since);
    });
  });

  describe('wakes across worker processes (decision 0218)', () => {
    /** A waker of its own, as another worker process runs one: its signals counted per endpoint. */
    const wakerOf = async (wakes: WebhookWakes, o: { signalIntervalMs?: number } = {}) => {
      const signals = new Map<string, number>();
      const signalledAt: { id: string; at: number }[] = [];
      const w = await startWebhookWaker({
        databaseUrl,
        pool,
        temporal: temporal.gateway,
        taskQueue: worker.webhookTaskQueue,
        wakes,
        sweepMs: 60_000,
        ...o,
        onSignal: (id) => {
          signals.set(id, (signals.get(id) ?? 0) + 1);
          signalledAt.push({ id, at: Date.now() });
        },
      });
      return { w, signals, signalledAt };
    };
    const notify = (endpointId: string) => notifyEndpoint(pool, endpointId);
    /** An endpoint of an organization of its own. */
    const ownEndpoint = async (url: string) => {
      const own = await createTestOrg(pool);
      return { ...(await createTestEndpoint(pool, own.organizationId, { url })), organizationId: own.organizationId };
    };
    /** A test delivery due `dueAgo` ago, inserted by hand (no notification). */
    const addDue = (endpoint: { id: string; organizationId: string }, dueAgo = '0 seconds') =>
      pool.query(sql.unsafe`
        INSERT INTO webhook_deliveries (id, endpoint_id, organization_id, event_type, body, next_attempt_at)
        VALUES (${`msg_wake_${randomUUID().slice(0, 8)}`}, ${endpoint.id}, ${endpoint.organizationId}, 'webhook.test', '{"type":"webhook.test"}',
          now() - ${dueAgo}::interval)`);
    /** An endpoint with one delivery due now. */
    const endpointWithOne = async (url: string) => {
      const endpoint = await ownEndpoint(url);
      await addDue(endpoint);
      return endpoint;
    };
    const sender = () => new WebhookSender({ payloadKeys: TEST_PAYLOAD_KEYS, policy: LOOPBACK_POLICY, retryDelaysMs: [0, 0, 0] });

    it('another process does not signal an endpoint whose call runs in a process that announced it, and signals once it ended', async () => {
      const { r, url } = await receiver();
      const endpoint = await endpointWithOne(url);
      const a = new WebhookWakes();
      const b = new WebhookWakes();
      const { w, signals } = await wakerOf(b);
      const s = sender();
      try {
        // Process A's call sends, then lingers (its process's wakes): A announced it to B.
        const stop = new AbortController();
        const call = sendDue({ pool, sender: s, wakes: a, signal: stop.signal }, endpoint.id);
        assert.ok(await waitFor(async () => r.received.length === 1 && b.runsElsewhere(endpoint.id), 10_000));
        for (let i = 0; i < 5; i++) await notify(endpoint.id);
        await w.flush();
        await new Promise((resolve) => setTimeout(resolve, 300));
        assert.equal(signals.get(endpoint.id) ?? 0, 0, 'A answers its own wakes: B signals nothing');
        stop.abort();
        assert.equal((await call).endpoint, 'active');
        // A announced the end: B signals the next wake.
        assert.ok(await waitFor(async () => !b.runsElsewhere(endpoint.id), 10_000));
        await notify(endpoint.id);
        assert.ok(await waitFor(async () => signals.get(endpoint.id) === 1, 10_000));
      } finally {
        await s.close();
        await w.close();
      }
    });

    it('a worker that starts while a call runs elsewhere learns of it from the call’s next announcement', async () => {
      const { r, url } = await receiver();
      const endpoint = await endpointWithOne(url);
      const a = new WebhookWakes();
      const s = new WebhookSender({ payloadKeys: TEST_PAYLOAD_KEYS, policy: LOOPBACK_POLICY, announceEveryMs: 300 });
      const stop = new AbortController();
      const call = sendDue({ pool, sender: s, wakes: a, signal: stop.signal }, endpoint.id);
      try {
        assert.ok(await waitFor(async () => r.received.length === 1, 10_000));
        // B starts after the call's first announcement.
        const b = new WebhookWakes();
        const { w } = await wakerOf(b);
        try {
          assert.equal(b.runsElsewhere(endpoint.id), false);
          assert.ok(await waitFor(async () => b.runsElsewhere(endpoint.id), 5_000));
          stop.abort();
          await call;
          assert.ok(await waitFor(async () => !b.runsElsewhere(endpoint.id), 5_000));
        } finally {
          await w.close();
        }
      } finally {
        stop.abort();
        await call.catch(() => undefined);
        await s.close();
      }
    });

    it('signals one endpoint at most once an interval, and the wakes meanwhile as one signal at its end', async () => {
      const { url } = await receiver();
      const endpoint = await ownEndpoint(url);
      const { w, signals, signalledAt } = await wakerOf(new WebhookWakes(), { signalIntervalMs: 3000 });
      try {
        await notify(endpoint.id);
        assert.ok(await waitFor(async () => signals.get(endpoint.id) === 1, 10_000));
        for (let i = 0; i < 10; i++) {
          await notify(endpoint.id);
          await new Promise((resolve) => setTimeout(resolve, 60));
        }
        assert.ok(await waitFor(async () => signals.get(endpoint.id) === 2, 10_000));
        const [first, second] = signalledAt.filter((x) => x.id === endpoint.id);
        assert.ok(second!.at - first!.at >= 2_950, 'the held wakes went out as one signal at the interval’s end');
        await new Promise((resolve) => setTimeout(resolve, 3_200));
        assert.equal(signals.get(endpoint.id), 2, 'one signal for the ten wakes');
      } finally {
        await w.close();
      }
    });

    it('the sweep signals an endpoint with an overdue delivery even while another process announces a call of it', async () => {
      const { url } = await receiver();
      const endpoint = await ownEndpoint(url);
      const b = new WebhookWakes();
      const { w, signals } = await wakerOf(b);
      try {
        // Another process says its call of the endpoint runs for a minute more (and then dies, say).
        b.noteAnnouncement({ endpointId: endpoint.id, processId: 'another process', untilMs: Date.now() + 60_000 });
        // Due 10 minutes ago (no notification), then swept at once, before the suite's own sweep takes it.
        await addDue(endpoint, '10 minutes');
        await w.flush();
        assert.equal(signals.get(endpoint.id), 1, 'the sweep found its delivery overdue');
      } finally {
        await w.close();
      }
    });
  });

  describe('over REST', () => {
    let api: TestApi;
    before(async () => {
      api = await startTestApi({ pool, databaseUrl });
    });
    after(async () => api?.close());
    const call = (path: string, method = 'GET', key = org.apiKey) =>
      api.request(`/v3/rest/webhook-endpoints${path}`, { method, headers: { 'X-Service-Api-Key': key } });

    it('lists deliveries newest first with their outcome, shows one with its attempts, redelivers it under the same id', async () => {
      const { r, url } = await receiver();
      const endpoint = await createTestEndpoint(pool, org.organizationId, { url });
      r.secrets = [endpoint.secret];
      r.answer = (_req, i) => (i === 0 ? 500 : 200);
      // One after the other: sent together, either could take the receiver's one 500.
      await record(pool, signalCreated(org));
      assert.ok(await settled(endpoint.id, 1));
      await record(pool, signalCreated(org));
      assert.ok(await settled(endpoint.id, 2));
      const [first, second] = await deliveriesOf(pool, endpoint.id);

      const list = await call(`/${endpoint.id}/deliveries?limit=1`);
      assert.equal(list.status, 200);
      assert.deepEqual(Object.keys(list.body).sort(), ['deliveries', 'has_more', 'limit', 'page']);
      assert.equal(list.body.has_more, true);
      assert.equal(list.body.deliveries[0].id, second!.id);
      const item = list.body.deliveries[0];
      assert.deepEqual(
        { ...item, lastAttemptAt: typeof item.lastAttemptAt, createdAt: typeof item.createdAt },
        {
          id: second!.id,
          endpointId: endpoint.id,
          eventType: 'signal.created',
          status: 'succeeded',
          attempts: 1,
          lastResponseStatus: 200,
          lastError: null,
          lastAttemptAt: 'string',
          nextAttemptAt: null,
          createdAt: 'string',
        },
      );
      const succeeded = await call(`/${endpoint.id}/deliveries?status=succeeded&limit=10`);
      assert.equal(succeeded.body.deliveries.length, 2);
      assert.equal((await call(`/${endpoint.id}/deliveries?status=failed`)).body.deliveries.length, 0);
      assert.equal((await call(`/${endpoint.id}/deliveries?status=lost`)).status, 400);

      const one = await call(`/${endpoint.id}/deliveries/${first!.id}`);
      assert.equal(one.status, 200);
      assert.equal(one.body.body, first!.body);
      assert.deepEqual(
        one.body.attemptLog.map((a: { responseStatus: number; error: string | null }) => [a.responseStatus, a.error]),
        [
          [500, 'HTTP 500'],
          [200, null],
        ],
      );
      assert.equal(one.body.attempts, 2);

      const seen = r.received.length;
      const again = await call(`/${endpoint.id}/deliveries/${first!.id}/redeliver`, 'POST');
      assert.equal(again.status, 202);
      assert.deepEqual([again.body.id, again.body.status], [first!.id, 'pending']);
      assert.ok(await waitFor(async () => r.received.length > seen, 20_000));
      assert.equal(r.received.at(-1)!.id, first!.id);
      assert.equal(r.received.at(-1)!.body, first!.body);
      assert.ok(await waitFor(async () => (await deliveriesOf(pool, endpoint.id)).every((d) => d.status === 'succeeded'), 20_000));
    });

    it('sends a webhook.test event to that endpoint only', async () => {
      const { r, url } = await receiver();
      const endpoint = await createTestEndpoint(pool, org.organizationId, { url });
      const other = await createTestEndpoint(pool, org.organizationId, { url });
      r.secrets = [endpoint.secret];
      const res = await call(`/${endpoint.id}/test`, 'POST');
      assert.equal(res.status, 202);
      assert.deepEqual([res.body.eventType, res.body.status, res.body.attempts], ['webhook.test', 'pending', 0]);
      assert.ok(await waitFor(async () => r.received.length === 1, 20_000));
      assert.equal(r.received[0]!.id, res.body.id);
      assert.deepEqual(r.received[0]!.verifiedWith, [0]);
      const body = JSON.parse(r.received[0]!.body) as { type: string; timestamp: string; data: unknown };
      assert.deepEqual(
        { ...body, timestamp: typeof body.timestamp },
        { type: 'webhook.test', timestamp: 'string', data: { endpointId: endpoint.id } },
      );
      assert.equal((await deliveriesOf(pool, other.id)).length, 0);
    });

    it("answers 404 for another organization's endpoint or an unknown delivery, 403 without webhooks:manage, 409 when disabled", async () => {
      const { url } = await receiver();
      const stranger = await createTestOrg(pool);
      const theirs = await createTestEndpoint(pool, stranger.organizationId, { url });
      for (const path of [`/${theirs.id}/deliveries`, `/${theirs.id}/test`, '/not-a-uuid/deliveries']) {
        const res = await call(path, path.endsWith('test') ? 'POST' : 'GET');
        assert.equal(res.status, 404, path);
        assert.equal(res.body.errorCode, 'not_found');
      }
      const mine = await createTestEndpoint(pool, org.organizationId, { url, enabled: false });
      assert.equal((await call(`/${mine.id}/deliveries/msg_nothing`)).status, 404);
      assert.equal((await call(`/${mine.id}/deliveries/msg_nothing/redeliver`, 'POST')).body.errorCode, 'webhook_endpoint_disabled');
      const disabled = await call(`/${mine.id}/test`, 'POST');
      assert.deepEqual([disabled.status, disabled.body.errorCode], [409, 'webhook_endpoint_disabled']);
      const reader = await createTestKey(pool, org.organizationId, ['signals:read']);
      const forbidden = await call(`/${mine.id}/deliveries`, 'GET', reader.apiKey);
      assert.deepEqual([forbidden.status, forbidden.body.errorCode], [403, 'insufficient_scope']);
    });

    it('intake webhook test, deliveries and redeliver do the same from the command line', async () => {
      const { r, url } = await receiver();
      const endpoint = await createTestEndpoint(pool, org.organizationId, { url });
      const env = { DATABASE_URL: databaseUrl, DATA_DIR: '/nonexistent' };
      const sent = await runIntake(env, 'webhook', 'test', '--endpoint', endpoint.id);
      assert.equal(sent.code, 0, sent.stderr);
      assert.equal(sent.json.eventType, 'webhook.test');
      assert.ok(await waitFor(async () => r.received.length === 1, 20_000));
      assert.ok(await settled(endpoint.id, 1));
      const listed = await runIntake(env, 'webhook', 'deliveries', '--endpoint', endpoint.id);
      assert.deepEqual(
        listed.json.deliveries.map((d: { id: string; status: string }) => [d.id, d.status]),
        [[sent.json.id, 'succeeded']],
      );
      const one = await runIntake(env, 'webhook', 'deliveries', '--endpoint', endpoint.id, '--delivery', sent.json.id);
      assert.equal(one.json.attemptLog.length, 1);
      const again = await runIntake(env, 'webhook', 'redeliver', '--endpoint', endpoint.id, '--delivery', sent.json.id);
      assert.equal(again.json.status, 'pending');
      assert.ok(await waitFor(async () => r.received.length === 2, 20_000));
      assert.deepEqual(r.ids(), [sent.json.id, sent.json.id]);
      const unknown = await runIntake(env, 'webhook', 'test', '--endpoint', randomUUID());
      assert.equal(unknown.code, 1);
      assert.match(unknown.stderr, /not found/);
    });
  });
});
