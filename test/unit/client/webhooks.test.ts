import { strict as assert } from 'node:assert';
import { verifyWebhook, WebhookVerificationError, type WebhookVerificationFailure } from '../../../clients/typescript/src/webhooks.js';
import { generateWebhookSecret, signedHeaders } from '../../../src/webhooks/signing.js';

const NOW = Date.parse('2026-01-15T10:00:00Z'); // past: without `now`, the receiver's clock finds it too old
const T = NOW / 1000;
const BODY = JSON.stringify({ type: 'signal.created', timestamp: '2026-11-26T10:00:00.000Z', data: { id: 'x', note: 'ünïcode' } });

function fails(reason: WebhookVerificationFailure, verify: () => unknown): void {
  assert.throws(verify, (e: unknown) => e instanceof WebhookVerificationError && e.reason === reason);
}

describe('the typed client: verifyWebhook (clients/typescript/src/webhooks.ts)', () => {
  const secret = generateWebhookSecret();
  const headers = signedHeaders([secret], 'msg_1', T, BODY);

  it("verifies what the server's signer (src/webhooks/signing.ts) signed, from text, bytes, Headers or Node's header object", () => {
    const verified = verifyWebhook<{ type: string; data: { note: string } }>(secret, headers, BODY, { now: NOW });
    assert.deepEqual([verified.id, verified.timestamp.getTime(), verified.payload.type], ['msg_1', NOW, 'signal.created']);
    assert.equal(verified.payload.data.note, 'ünïcode');
    assert.equal(verifyWebhook(secret, new Headers(headers), Buffer.from(BODY), { now: NOW }).id, 'msg_1');
    const upper = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), [v]]));
    assert.equal(verifyWebhook(secret, upper, new TextEncoder().encode(BODY), { now: new Date(NOW) }).id, 'msg_1');
  });

  it('refuses a tampered body, id or timestamp, and another secret', () => {
    fails('no_matching_signature', () => verifyWebhook(secret, headers, BODY.replace('signal', 'sign4l'), { now: NOW }));
    fails('no_matching_signature', () => verifyWebhook(secret, { ...headers, 'webhook-id': 'msg_2' }, BODY, { now: NOW }));
    fails('no_matching_signature', () => verifyWebhook(secret, { ...headers, 'webhook-timestamp': String(T + 1) }, BODY, { now: NOW }));
    fails('no_matching_signature', () => verifyWebhook(generateWebhookSecret(), headers, BODY, { now: NOW }));
    fails('no_matching_signature', () =>
      verifyWebhook(secret, { ...headers, 'webhook-signature': `v2,${headers['webhook-signature']!.slice(3)}` }, BODY, { now: NOW }),
    );
  });

  it('refuses a timestamp outside the tolerance (300 s by default), either way', () => {
    const old = signedHeaders([secret], 'msg_1', T - 301, BODY);
    fails('timestamp_too_old', () => verifyWebhook(secret, old, BODY, { now: NOW }));
    assert.equal(verifyWebhook(secret, old, BODY, { now: NOW, toleranceSeconds: 600 }).id, 'msg_1');
    assert.equal(verifyWebhook(secret, signedHeaders([secret], 'msg_1', T - 300, BODY), BODY, { now: NOW }).id, 'msg_1');
    fails('timestamp_too_new', () => verifyWebhook(secret, signedHeaders([secret], 'msg_1', T + 301, BODY), BODY, { now: NOW }));
    fails('timestamp_too_old', () => verifyWebhook(secret, headers, BODY));
    fails('invalid_timestamp', () => verifyWebhook(secret, { ...headers, 'webhook-timestamp': '1.7e9' }, BODY, { now: NOW }));
  });

  it('verifies a delivery signed with a rotated pair with either secret, or with both given', () => {
    const [current, previous] = [generateWebhookSecret(), generateWebhookSecret()];
    const rotated = signedHeaders([current, previous], 'msg_3', T, BODY);
    assert.equal(rotated['webhook-signature']!.split(' ').length, 2);
    for (const s of [current, previous, [previous, current]]) assert.equal(verifyWebhook(s, rotated, BODY, { now: NOW }).id, 'msg_3');
    fails('no_matching_signature', () => verifyWebhook([secret, generateWebhookSecret()], rotated, BODY, { now: NOW }));
  });

  it('refuses a delivery without its headers, and an unusable secret', () => {
    const { 'webhook-signature': _, ...unsigned } = headers;
    fails('missing_headers', () => verifyWebhook(secret, unsigned, BODY, { now: NOW }));
    fails('invalid_secret', () => verifyWebhook('whsec_', headers, BODY, { now: NOW }));
  });
});
