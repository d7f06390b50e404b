import { strict as assert } from 'node:assert';
import { randomBytes } from 'node:crypto';
import { AppError } from '../../../src/errors.js';
import { credentialOf, parseIdempotencyKey, requestHash } from '../../../src/idempotency/request.js';
import { openBody, sealBody } from '../../../src/idempotency/sealed-body.js';
import { openApiDocument } from './openapi-document.js';

const invalid = (e: unknown) => e instanceof AppError && e.errorCode === 'idempotency_key_invalid' && e.status === 400;

describe('idempotency keys: the pure parts (src/idempotency)', () => {
  it('hashes the canonical request: key order and whitespace do not matter; method, path and every value do', () => {
    const base = requestHash('POST', '/v3/rest/folders', { name: 'Calls', nested: { a: 1, b: [1, 2] } });
    assert.equal(base.length, 32);
    assert.deepEqual(requestHash('post', '/v3/rest/folders', JSON.parse('{ "nested": { "b": [1, 2], "a": 1 }, "name": "Calls" }')), base);
    for (const other of [
      requestHash('PUT', '/v3/rest/folders', { name: 'Calls', nested: { a: 1, b: [1, 2] } }),
      requestHash('POST', '/v3/rest/feedback-sources', { name: 'Calls', nested: { a: 1, b: [1, 2] } }),
      requestHash('POST', '/v3/rest/folders', { name: 'Calls', nested: { a: 1, b: [2, 1] } }),
      requestHash('POST', '/v3/rest/folders', { name: 'Calls', nested: { a: '1', b: [1, 2] } }),
      requestHash('POST', '/v3/rest/folders', { name: 'Calls', nested: { a: 1, b: [1, 2] }, extra: null }),
    ]) {
      assert.notDeepEqual(other, base);
    }
    // No body and an empty body are distinct requests; an absent body is the same as null.
    assert.deepEqual(requestHash('POST', '/x', undefined), requestHash('POST', '/x', null));
    assert.notDeepEqual(requestHash('POST', '/x', undefined), requestHash('POST', '/x', {}));
  });

  it('reads the header: absent is no key; empty, blank, over 255 characters or not printable ASCII is 400', () => {
    assert.equal(parseIdempotencyKey(undefined), undefined);
    assert.equal(parseIdempotencyKey(' 3f6c1c52-5d0e-4f4e-9d7e-1c7d3c1c9a10 '), '3f6c1c52-5d0e-4f4e-9d7e-1c7d3c1c9a10');
    assert.equal(parseIdempotencyKey('k'.repeat(255)), 'k'.repeat(255));
    for (const bad of ['', '   ', 'k'.repeat(256), 'caf\u00e9', 'tab\there'])
      assert.throws(() => parseIdempotencyKey(bad), invalid, JSON.stringify(bad));
  });

  it('scopes a key by credential: the API key or the user', () => {
    assert.equal(credentialOf({ kind: 'apiKey', organizationId: 'o', apiKeyId: 'k1', scopes: [] }), 'apiKey:k1');
    assert.equal(credentialOf({ kind: 'user', organizationId: 'o', userId: 'u1', role: 'admin', scopes: [] }), 'user:u1');
  });

  it('seals stored responses under the first payload key and opens them with any listed key', () => {
    const k1 = { id: 'k1', key: new Uint8Array(randomBytes(32)) };
    const k2 = { id: 'k2', key: new Uint8Array(randomBytes(32)) };
    const body = JSON.stringify({ secret: 'whsec_abc' });
    const sealed = sealBody([k1, k2], body);
    assert.match(sealed, /^v1\.k1\.[A-Za-z0-9_-]+$/);
    assert.ok(!sealed.includes('whsec_abc'));
    assert.equal(openBody([k2, k1], sealed), body, 'after a rotation the old key still opens');
    assert.throws(() => openBody([k2], sealed), /unknown key id "k1"/);
    const tampered = sealed.slice(0, -2) + (sealed.endsWith('A') ? 'BB' : 'AA');
    assert.throws(() => openBody([k1], tampered));
  });
});

describe('idempotency keys in the OpenAPI document', () => {
  type Operation = {
    parameters: { name: string; in: string }[];
    responses: Record<string, { headers?: Record<string, unknown>; description: string }>;
  };
  const OPTED_IN = [
    ['/v3/rest/feedback-sources', 'post'],
    ['/v3/rest/agent-applications', 'post'],
    ['/v3/rest/agent-applications/{applicationId}/credentials', 'post'],
    ['/v3/rest/folders', 'post'],
    ['/v3/rest/metadata-fields', 'post'],
    ['/v3/rest/webhook-endpoints', 'post'],
    ['/v3/rest/webhook-endpoints/{endpointId}/rotate-secret', 'post'],
    ['/v3/rest/api-keys', 'post'],
  ] as const;

  it('documents the header, the replay header and the three errors on each opted-in operation, and on no other', async () => {
    const doc = await openApiDocument();
    const operation = (path: string, method: string) => doc.paths[path]![method] as unknown as Operation;
    for (const [path, method] of OPTED_IN) {
      const op = operation(path, method);
      assert.ok(
        op.parameters.some((p) => p.name === 'Idempotency-Key' && p.in === 'header'),
        `${method} ${path}`,
      );
      assert.ok((op.responses['201'] ?? op.responses['200'])?.headers?.['Idempotent-Replayed'], `${method} ${path}`);
      assert.match(op.responses['400']!.description, /idempotency_key_invalid/);
      assert.match(op.responses['409']!.description, /idempotency_key_in_progress/);
      assert.match(op.responses['422']!.description, /idempotency_key_reused/);
    }
    const optedIn = new Set(OPTED_IN.map(([p, m]) => `${m} ${p}`));
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const method of Object.keys(methods)) {
        if (optedIn.has(`${method} ${path}`)) continue;
        const op = operation(path, method);
        assert.ok(!op.parameters.some((p) => p.name === 'Idempotency-Key'), `${method} ${path} takes no Idempotency-Key`);
      }
    }
  });
});
