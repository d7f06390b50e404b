import { strict as assert } from 'node:assert';
import type { AgentIngestRequest } from '../../../../src/domain/agent-ingest.js';
import {
  normalizeFieldName,
  sanitizeIngestRequest,
  sanitizeText,
  sanitizeValue,
  type SanitizeSettings,
} from '../../../../src/domain/sanitize/index.js';

// Fake token of the GitHub classic format (built, not written out, to keep scanners quiet).
const GITHUB_TOKEN = `ghp_${'a1B2c3D4e5'.repeat(4).slice(0, 36)}`;
const NONE: SanitizeSettings = { redactedFieldNames: [], redactedTextPatterns: [] };

function request(): AgentIngestRequest {
  const context = {
    productArea: 'billing',
    pathname: '/invoices/42',
    environment: 'production',
    properties: { plan: 'pro', customer: { ssn: '123-45-6789', tier: 2 } },
  };
  return {
    agentKey: 'support-bot',
    externalSessionId: 'sess-1',
    status: 'open',
    agentVersion: '1.4.0',
    source: { sdk: 'intake-js', version: '2.0.0' },
    context,
    participants: [
      {
        externalId: 'u-1',
        displayName: 'Ada Lovelace',
        username: 'ada',
        email: 'ada@example.com',
        personId: 'p-1',
        companyExternalId: 'acme',
        boundary: 'external',
        ownerUserId: 'owner-1',
        properties: { ssn: '123-45-6789', city: 'London' },
      },
    ],
    events: [
      {
        externalEventId: 'e-1',
        sequence: 1,
        revision: 0,
        occurredAt: '2024-06-11T10:00:00Z',
        type: 'user_message',
        participantExternalId: 'u-1',
        content: `my token is ${GITHUB_TOKEN}, account ACME-SECRET-42`,
        final: true,
        context: { ...context, properties: { ssn: '123-45-6789', nested: { deeper: { ssn: 'x' } } } },
      },
      {
        externalEventId: 'e-2',
        sequence: 2,
        revision: 0,
        occurredAt: '2024-06-11T10:00:01Z',
        type: 'assistant_message',
        content: 'Sure.',
        model: { provider: 'openai', name: 'gpt-4o' },
        usage: { inputTokens: 10, outputTokens: 3, latencyMs: 800 },
        trace: { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' },
      },
      {
        externalEventId: 'e-3',
        sequence: 3,
        revision: 0,
        occurredAt: '2024-06-11T10:00:02Z',
        type: 'feedback',
        feedback: { targetEventExternalId: 'e-2', rating: 'negative', labels: ['wrong', 'ACME-SECRET-42'], comment: 'bad' },
      },
    ],
  };
}

describe('sanitizer', () => {
  it('normalizes field names ignoring case, underscores, dashes and spaces', () => {
    for (const name of ['apiKey', 'api_key', 'API-KEY', 'Api Key']) assert.equal(normalizeFieldName(name), 'apikey');
  });

  it('replaces configured exact texts literally, longest first, before masking secrets', async () => {
    const settings: SanitizeSettings = { redactedFieldNames: [], redactedTextPatterns: ['ACME', 'ACME-SECRET-42', 'a.c', ''] };
    assert.equal(sanitizeText('ACME-SECRET-42 and ACME, abc but a.c', settings), '[REDACTED] and [REDACTED], abc but [REDACTED]');
    // A short pattern inside `[REDACTED]` is not replaced again.
    assert.equal(
      sanitizeText('RED and ACT', { redactedFieldNames: [], redactedTextPatterns: ['RED', 'ACT'] }),
      '[REDACTED] and [REDACTED]',
    );
    assert.equal(sanitizeText(`key ${GITHUB_TOKEN}`, settings), 'key [REDACTED:github_token]');
  });

  it('does not let a configured text hide a secret from detection', async () => {
    const settings: SanitizeSettings = { redactedFieldNames: [], redactedTextPatterns: ['password', GITHUB_TOKEN.slice(0, 10)] };
    assert.equal(sanitizeText('password=hunter22x', settings), '[REDACTED]=[REDACTED:secret_assignment]');
    const masked = sanitizeText(`use ${GITHUB_TOKEN} now`, settings);
    assert.ok(!masked.includes(GITHUB_TOKEN.slice(10)), masked);
    assert.equal(masked, 'use [REDACTED:github_token] now');
  });

  it('removes configured keys and masks secret-named keys in any JSON value', async () => {
    const value = {
      keep: 'x',
      API_KEY: 123,
      nested: [{ apiKey: 'k', password: { any: 'thing' }, client_secret: null, note: GITHUB_TOKEN }],
      'refresh-token': true,
      inputTokens: 10,
    };
    const result = sanitizeValue(value, { redactedFieldNames: ['keep'], redactedTextPatterns: [] });
    assert.deepEqual(result, {
      API_KEY: '[REDACTED:secret_field]',
      nested: [
        {
          apiKey: '[REDACTED:secret_field]',
          password: '[REDACTED:secret_field]',
          client_secret: '[REDACTED:secret_field]',
          note: '[REDACTED:github_token]',
        },
      ],
      'refresh-token': '[REDACTED:secret_field]',
      inputTokens: 10,
    });
    const removed = sanitizeValue(value, { redactedFieldNames: ['apiKey'], redactedTextPatterns: [] });
    assert.deepEqual(Object.keys(removed as object), ['keep', 'nested', 'refresh-token', 'inputTokens']);
    assert.deepEqual(Object.keys((removed as { nested: object[] }).nested[0]!), ['password', 'client_secret', 'note']);
  });

  it('keeps key order and a __proto__ key as a plain key', async () => {
    const value = JSON.parse('{"z": 1, "a": "b", "__proto__": {"m": 2}}') as Record<string, number>;
    const result = sanitizeValue(value, NONE);
    assert.deepEqual(Object.keys(result as object), ['z', 'a', '__proto__']);
    assert.equal(Object.getPrototypeOf(result), Object.prototype);
  });

  it('removes configured field names everywhere they may appear', async () => {
    const names = [
      'content',
      'model',
      'usage',
      'trace',
      'labels',
      'comment',
      'productArea',
      'ssn',
      'displayName',
      'username',
      'email',
      'companyExternalId',
    ];
    const out = sanitizeIngestRequest(request(), { redactedFieldNames: names, redactedTextPatterns: [] });
    const [e1, e2, e3] = out.events;
    assert.deepEqual(out.context, {
      pathname: '/invoices/42',
      environment: 'production',
      properties: { plan: 'pro', customer: { tier: 2 } },
    });
    assert.deepEqual(out.participants, [
      { externalId: 'u-1', personId: 'p-1', boundary: 'external', ownerUserId: 'owner-1', properties: { city: 'London' } },
    ]);
    assert.equal(e1?.content, undefined);
    assert.ok(e1 && !('content' in e1));
    assert.deepEqual(e1.context, { pathname: '/invoices/42', environment: 'production', properties: { nested: { deeper: {} } } });
    assert.deepEqual(e2, {
      externalEventId: 'e-2',
      sequence: 2,
      revision: 0,
      occurredAt: '2024-06-11T10:00:01Z',
      type: 'assistant_message',
    });
    assert.deepEqual(e3?.feedback, { targetEventExternalId: 'e-2', rating: 'negative' });
  });

  it('removes keys of model, usage, trace and properties one by one', async () => {
    const out = sanitizeIngestRequest(request(), {
      redactedFieldNames: ['provider', 'latency_ms', 'span-id', 'properties'],
      redactedTextPatterns: [],
    });
    assert.deepEqual(out.events[1]?.model, { name: 'gpt-4o' });
    assert.deepEqual(out.events[1]?.usage, { inputTokens: 10, outputTokens: 3 });
    assert.deepEqual(out.events[1]?.trace, { traceId: '4bf92f3577b34da6a3ce929d0e0e4736' });
    assert.equal(out.context?.properties, undefined);
    assert.equal(out.participants?.[0]?.properties, undefined);
  });

  it('never removes or rewrites structural fields', async () => {
    const structural = [
      'agentKey',
      'externalSessionId',
      'status',
      'externalEventId',
      'sequence',
      'revision',
      'occurredAt',
      'type',
      'participantExternalId',
      'final',
      'context',
      'feedback',
      'events',
      'participants',
      'agentVersion',
      'source',
      'sdk',
      'version',
    ];
    const input = request();
    const out = sanitizeIngestRequest(input, {
      redactedFieldNames: structural,
      redactedTextPatterns: ['production', 'u-1', 'e-2', 'open'],
    });
    assert.equal(out.agentKey, input.agentKey);
    assert.equal(out.externalSessionId, input.externalSessionId);
    assert.equal(out.status, 'open');
    assert.equal(out.context?.environment, 'production');
    assert.deepEqual(out.source, { sdk: 'intake-js', version: '2.0.0' });
    const { externalEventId, sequence, revision, occurredAt, type, participantExternalId, final } = input.events[0]!;
    assert.deepEqual(
      { ...out.events[0], content: undefined, context: undefined },
      { externalEventId, sequence, revision, occurredAt, type, participantExternalId, final, content: undefined, context: undefined },
    );
    assert.equal(out.events[0]?.context?.environment, 'production');
    assert.deepEqual(out.events[2]?.feedback?.targetEventExternalId, 'e-2');
    const { externalId, personId, ownerUserId, boundary } = out.participants![0]!;
    assert.deepEqual(
      { externalId, personId, ownerUserId, boundary },
      { externalId: 'u-1', personId: 'p-1', ownerUserId: 'owner-1', boundary: 'external' },
    );
  });

  it('removes the environment, feedback keys and participant identity keys when configured (spec: context, feedback, participant identity)', async () => {
    const names = [
      'environment',
      'rating',
      'targetEventExternalId',
      'externalId',
      'personId',
      'ownerUserId',
      'boundary',
      'companyExternalId',
    ];
    const out = sanitizeIngestRequest(request(), { redactedFieldNames: names, redactedTextPatterns: [] });
    assert.equal(out.context && 'environment' in out.context, false);
    assert.equal(out.events[0]?.context && 'environment' in out.events[0].context, false);
    assert.deepEqual(out.events[2]?.feedback, { labels: ['wrong', 'ACME-SECRET-42'], comment: 'bad' });
    assert.deepEqual(out.participants, [
      { displayName: 'Ada Lovelace', username: 'ada', email: 'ada@example.com', properties: { ssn: '123-45-6789', city: 'London' } },
    ]);
    // The event's own reference is a key of the event, not a participant identity field: kept.
    assert.equal(out.events[0]?.participantExternalId, 'u-1');
  });

  it("replaces configured texts in a participant's companyExternalId", async () => {
    const out = sanitizeIngestRequest(request(), { redactedFieldNames: [], redactedTextPatterns: ['acme'] });
    assert.equal(out.participants?.[0]?.companyExternalId, '[REDACTED]');
  });

  it('replaces configured texts and masks secrets in every free-text field', async () => {
    const out = sanitizeIngestRequest(request(), {
      redactedFieldNames: [],
      redactedTextPatterns: ['ACME-SECRET-42', 'London', 'Lovelace', 'billing'],
    });
    assert.equal(out.events[0]?.content, 'my token is [REDACTED:github_token], account [REDACTED]');
    assert.deepEqual(out.events[2]?.feedback?.labels, ['wrong', '[REDACTED]']);
    assert.equal(out.participants?.[0]?.displayName, 'Ada [REDACTED]');
    assert.equal(out.participants?.[0]?.email, 'ada@example.com');
    assert.deepEqual(out.participants?.[0]?.properties, { ssn: '123-45-6789', city: '[REDACTED]' });
    assert.equal(out.context?.productArea, '[REDACTED]');
    assert.equal(out.events[0]?.context?.productArea, '[REDACTED]');
  });

  it('masks secret-named keys inside properties', async () => {
    const input = request();
    input.participants![0]!.properties = { apiToken: 'abc', nested: { Password: 42, ok: 'fine' } };
    const out = sanitizeIngestRequest(input, NONE);
    assert.deepEqual(out.participants?.[0]?.properties, {
      apiToken: '[REDACTED:secret_field]',
      nested: { Password: '[REDACTED:secret_field]', ok: 'fine' },
    });
  });

  it('is deterministic and does not mutate its input', async () => {
    const settings: SanitizeSettings = { redactedFieldNames: ['ssn', 'usage'], redactedTextPatterns: ['ACME-SECRET-42'] };
    const input = request();
    const snapshot = structuredClone(input);
    const first = sanitizeIngestRequest(input, settings);
    const second = sanitizeIngestRequest(input, settings);
    assert.equal(JSON.stringify(first), JSON.stringify(second));
    assert.deepEqual(input, snapshot);
    assert.notEqual(first, input);
    assert.notEqual(first.events[0], input.events[0]);
  });
});
