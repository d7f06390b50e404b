import { strict as assert } from 'node:assert';
import { ingestBody } from '../../../../src/contracts/agent-ingest.js';
import { INGEST_SHAPES } from '../../../../src/domain/sanitize/sanitizer.js';

type Schema = { properties?: Record<string, Schema>; items?: Schema };
const request = ingestBody as unknown as Schema;
const event = request.properties!.events!.items!;

/**
 * Where each shape of the sanitizer applies in the ingest schema, and the keys there that are plain
 * JSON on purpose (sanitized as any value: removable, masked). A key added to the schema must be
 * put in the shape or here: the test fails until it is.
 */
const PLACES = {
  request: { at: [request], generic: [] },
  source: { at: [request.properties!.source!], generic: [] },
  context: {
    at: [request.properties!.context!, event.properties!.context!],
    generic: ['productArea', 'surface', 'routeTemplate', 'pathname', 'entryPoint', 'entityType', 'entityId', 'release', 'properties'],
  },
  participant: { at: [request.properties!.participants!.items!], generic: ['displayName', 'username', 'email', 'properties'] },
  event: { at: [event], generic: ['content', 'model', 'usage', 'trace', 'toolCalls'] },
  feedback: { at: [event.properties!.feedback!], generic: ['labels', 'comment'] },
} satisfies Record<keyof typeof INGEST_SHAPES, { at: Schema[]; generic: string[] }>;

describe('sanitizer shapes against the ingest schema', () => {
  for (const [name, place] of Object.entries(PLACES)) {
    it(`the ${name} shape names schema properties, and every other property there is plain JSON on purpose`, () => {
      const shape = INGEST_SHAPES[name as keyof typeof INGEST_SHAPES];
      for (const schema of place.at) {
        const properties = Object.keys(schema.properties ?? {}).sort();
        assert.deepEqual([...shape.keys(), ...place.generic].sort(), properties);
      }
    });
  }
});
