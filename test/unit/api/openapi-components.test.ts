import { strict as assert } from 'node:assert';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsPlugin from 'ajv-formats';
import { openApiDocument, type OpenApiDocument } from './openapi-document.js';

/** Every schema in `schema` (itself, its properties, items and alternatives) with the JSON pointer it is at. */
function* schemasIn(schema: unknown, at: string): Generator<[string, Record<string, unknown>]> {
  if (schema === null || typeof schema !== 'object') return;
  const s = schema as Record<string, unknown>;
  yield [at, s];
  for (const [name, sub] of Object.entries((s.properties ?? {}) as Record<string, unknown>))
    yield* schemasIn(sub, `${at}/properties/${name}`);
  if (s.items) yield* schemasIn(s.items, `${at}/items`);
  for (const keyword of ['anyOf', 'oneOf', 'allOf']) {
    for (const [i, sub] of ((s[keyword] ?? []) as unknown[]).entries()) yield* schemasIn(sub, `${at}/${keyword}/${i}`);
  }
}

describe('OpenAPI components', () => {
  let doc: OpenApiDocument;
  before(async () => {
    doc = await openApiDocument();
  });

  it('names the main entities, each with a description and an example', () => {
    const names = Object.keys(doc.components.schemas);
    for (const name of [
      'Recording',
      'RecordingListItem',
      'Transcript',
      'Upload',
      'Session',
      'SessionDetail',
      'Event',
      'Signal',
      'FeedbackRecord',
      'Person',
      'Source',
      'Application',
      'Credential',
      'Organization',
      'User',
      'Error',
    ]) {
      assert.ok(names.includes(name), name);
    }
    for (const [name, schema] of Object.entries(doc.components.schemas)) {
      assert.equal(typeof schema.description, 'string', `${name} has a description`);
      assert.ok(Array.isArray(schema.examples) && schema.examples.length === 1, `${name} has an example`);
    }
  });

  it("each component's example matches its schema", () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormatsPlugin.default(ajv);
    ajv.addSchema({ $id: 'https://intake.test/openapi.json', ...doc });
    for (const [name, schema] of Object.entries(doc.components.schemas)) {
      const validate = ajv.getSchema(`https://intake.test/openapi.json#/components/schemas/${name}`)!;
      assert.ok(validate((schema.examples as unknown[])[0]), `${name}: ${JSON.stringify(validate.errors)}`);
    }
  });

  it('responses refer to the named entities', () => {
    const schemaOf = (path: string, method: string, status: string) =>
      doc.paths[path]![method]!.responses[status]!.content!['application/json'].schema;
    assert.deepEqual(schemaOf('/v3/rest/recordings/{recordingId}', 'get', '200'), { $ref: '#/components/schemas/Recording' });
    assert.deepEqual(schemaOf('/v3/rest/agent-conversations/sessions/{sessionId}', 'get', '200'), {
      $ref: '#/components/schemas/SessionDetail',
    });
    const list = schemaOf('/v3/rest/recordings', 'get', '200') as { properties: Record<string, unknown>; required: string[] };
    assert.deepEqual(list.properties.recordings, { type: 'array', items: { $ref: '#/components/schemas/RecordingListItem' } });
    assert.deepEqual(list.required, ['recordings', 'page', 'limit', 'has_more']);
  });

  it('closes every object schema of a 2xx response and of every entity, so a field the schema does not document is a mismatch', () => {
    const open: string[] = [];
    const check = (schema: unknown, at: string) => {
      for (const [pointer, s] of schemasIn(schema, at)) {
        if (s.properties && s.additionalProperties !== false && !pointer.startsWith('#/components/schemas/Error')) open.push(pointer);
      }
    };
    for (const [name, schema] of Object.entries(doc.components.schemas)) check(schema, `#/components/schemas/${name}`);
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(operations)) {
        for (const [status, response] of Object.entries(op.responses)) {
          if (status.startsWith('2')) check(response.content?.['application/json']?.schema, `${method} ${path} ${status}`);
        }
      }
    }
    assert.deepEqual(open, []);
  });
});
