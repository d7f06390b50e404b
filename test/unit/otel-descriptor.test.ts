import { strict as assert } from 'node:assert';
import { readFile } from 'node:fs/promises';
import { generatedModule } from '../../src/otel/descriptor.js';
import { resolveFromRoot } from '../../src/paths.js';

describe('the OTLP protobuf descriptor', () => {
  it('src/otel/otlp-descriptor.generated.ts is what `npm run otlp:descriptor` writes from src/otel/proto', async () => {
    const committed = await readFile(resolveFromRoot('src/otel/otlp-descriptor.generated.ts'), 'utf8');
    assert.equal(committed, generatedModule(), 'stale: run npm run otlp:descriptor');
    assert.match(committed, /ExportTraceServiceRequest/);
    assert.match(committed, /ExportLogsServiceRequest/);
  });
});
