import { strict as assert } from 'node:assert';
import { Webhook } from 'standardwebhooks';
import { generateWebhookSecret, signature, signedHeaders, signingKey } from '../../../src/webhooks/signing.js';

describe('webhook signing (Standard Webhooks)', () => {
  const secret = generateWebhookSecret();
  const body = JSON.stringify({ type: 'signal.created', timestamp: '2026-11-26T08:00:00.000Z', data: { signalId: 's1' } });
  // Taken when a test runs, not when the file loads: mocha loads every file first, and a shard may
  // run this one minutes later, past the verifier's five-minute tolerance.
  const now = () => Math.floor(Date.now() / 1000);

  it('signs the same with the secret and with its signingKey (made once per batch by the sender)', () => {
    const at = now();
    assert.equal(signature(signingKey(secret), 'msg_1', at, body), signature(secret, 'msg_1', at, body));
    assert.deepEqual(signedHeaders([signingKey(secret)], 'msg_1', at, body), signedHeaders([secret], 'msg_1', at, body));
  });

  it('is verified by the npm standardwebhooks package, with either secret while a rotated-out one is valid', () => {
    const previous = generateWebhookSecret();
    const headers = signedHeaders([signingKey(secret), signingKey(previous)], 'msg_2', now(), body);
    assert.match(headers['webhook-signature']!, /^v1,[A-Za-z0-9+/=]+ v1,[A-Za-z0-9+/=]+$/);
    for (const s of [secret, previous]) assert.deepEqual(new Webhook(s).verify(body, headers), JSON.parse(body));
    assert.throws(() => new Webhook(generateWebhookSecret()).verify(body, headers), /No matching signature found/);
  });

  it('refuses a secret without the whsec_ prefix', () => {
    assert.throws(() => signingKey('c2VjcmV0'), /a webhook secret starts with whsec_/);
  });
});
