import { servedOpenApiDocument } from '../../../src/cli/openapi.js';
import { testConfig } from '../../../harness/config.js';

export interface OpenApiDocument {
  paths: Record<string, Record<string, { responses: Record<string, { content?: { 'application/json': { schema: unknown } } }> }>>;
  components: { schemas: Record<string, Record<string, unknown>> };
}

/** /openapi.json as the app serves it, built over stand-in dependencies (nothing is connected or called). */
export async function openApiDocument(): Promise<OpenApiDocument> {
  // The file store would create directories.
  return (await servedOpenApiDocument(testConfig({ UPLOAD_STORE: 's3', S3_BUCKET: 'openapi-test' }))) as unknown as OpenApiDocument;
}
