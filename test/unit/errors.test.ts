import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { buildOpenApi, ERROR_REF } from '../../api/openapi.js';
import type { AnyRouteSpec } from '../../api/routes.js';
import {
  AppError,
  ConflictError,
  DependencyUnavailableError,
  ERROR_CATALOGUE,
  ERROR_KEYS,
  errorCodeOf,
  NotFoundError,
  UnauthenticatedError,
  ValidationError,
} from '../../src/errors.js';
import { errorReference, withErrorReference } from '../../src/error-reference.js';
import { PROJECT_ROOT } from '../../src/paths.js';
import { assetErrorCodeOf, FAILURE_TYPES, FailureType } from '../../src/domain/failure-types.js';

/** Every TypeScript file under a folder of the project. */
function sources(folder: string): string[] {
  return readdirSync(path.join(PROJECT_ROOT, folder), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => path.join(PROJECT_ROOT, folder, f));
}

describe('the error catalogue (src/error-catalogue.ts)', () => {
  it('gives each error a 4xx or 5xx status, a message and a description, and each errorCode one status', () => {
    const seen = new Map<string, number>();
    for (const key of ERROR_KEYS) {
      const entry: { status: number; message: string; description: string; code?: string } = ERROR_CATALOGUE[key];
      assert.ok(entry.status >= 400 && entry.status < 600, key);
      assert.ok(entry.message.length > 0 && entry.description.length > 0, key);
      // An entry with `code` answers another entry's errorCode with its own status (an area's contract).
      if (entry.code) assert.ok(entry.code in ERROR_CATALOGUE && ERROR_CATALOGUE[entry.code as never] !== entry, key);
      const pair = `${errorCodeOf(key)} ${entry.status}`;
      assert.ok(!seen.has(pair), `${pair} twice`);
      seen.set(pair, entry.status);
    }
  });

  it('has no entry that nothing raises: every key is named in api/ or src/ outside the catalogue', () => {
    const catalogue = path.join(PROJECT_ROOT, 'src', 'error-catalogue.ts');
    const text = [...sources('api'), ...sources('src')]
      .filter((f) => f !== catalogue)
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n');
    // DependencyUnavailableError names its two keys by template.
    const unused = ERROR_KEYS.filter((k) => !text.includes(`'${k}'`) && !k.endsWith('_unavailable'));
    assert.deepEqual(unused, []);
  });

  it('builds an AppError from a key: status, errorCode and headers from the catalogue, the message overridable', () => {
    const closed = new AppError('upload_closed');
    assert.deepEqual([closed.status, closed.errorCode, closed.message], [410, 'upload_closed', ERROR_CATALOGUE.upload_closed.message]);
    const overridden = new AppError('rate_limited', {
      message: 'slow down',
      details: { retryAfterSeconds: 3 },
      headers: { 'Retry-After': '3' },
    });
    assert.deepEqual(
      [overridden.status, overridden.message, overridden.details, overridden.headers],
      [429, 'slow down', { retryAfterSeconds: 3 }, { 'Retry-After': '3' }],
    );
    const ingest = new AppError('ingest_payload_too_large');
    assert.deepEqual([ingest.status, ingest.errorCode], [400, 'payload_too_large']);
    assert.deepEqual(new UnauthenticatedError('token_expired', 'The access token has expired.').headers, {
      'WWW-Authenticate': 'Bearer realm="intake"',
    });
    const busy = new DependencyUnavailableError('temporal');
    assert.deepEqual(
      [busy.status, busy.errorCode, busy.message, busy.headers],
      [503, 'temporal_unavailable', 'The service is temporarily unavailable (temporal); retry later.', { 'Retry-After': '5' }],
    );
    const missing = new NotFoundError('Folder', { folderId: 'f' });
    assert.deepEqual([missing.status, missing.message, missing.details], [404, 'Folder not found.', { resource: 'Folder', folderId: 'f' }]);
    assert.deepEqual(new ValidationError([{ path: 'body.x', message: 'is required' }]).message, 'The request is invalid.');
    assert.equal(new ConflictError('sequence_occupied', 'taken').status, 409);
  });
});

describe('OpenAPI error responses (api/openapi.ts)', () => {
  const base = {
    method: 'post',
    operationId: 'op',
    summary: 's',
    tags: [],
    handler: async () => undefined,
  } satisfies Partial<AnyRouteSpec>;
  const operationOf = (spec: AnyRouteSpec) => {
    const document = buildOpenApi([spec], undefined) as { paths: Record<string, Record<string, { responses: Record<string, any> }>> };
    return document.paths[spec.path]![spec.method]!.responses;
  };
  const codesOf = (response: any): string[] => response.content['application/json'].schema.allOf[1].properties.errorCode.enum;

  it('generates one response per status from the route codes and the standard ones, each listing its codes and messages', () => {
    const responses = operationOf({
      ...base,
      path: '/things/{thingId}',
      auth: { accept: ['apiKey'], scope: 'recordings:write' },
      body: { schema: { type: 'object' }, tooLarge: 'recording_payload_too_large' },
      responses: { 201: { description: 'Created' } },
      errors: ['media_ingestion_active', 'asset_already_completed', 'upload_too_large'],
    });
    assert.deepEqual(Object.keys(responses), ['201', '400', '401', '403', '404', '409', '413', '415', '503']);
    assert.deepEqual(codesOf(responses['409']), ['media_ingestion_active', 'asset_already_completed']);
    assert.deepEqual(codesOf(responses['413']), ['recording_payload_too_large', 'upload_too_large']);
    assert.deepEqual(codesOf(responses['403']), ['insufficient_scope']);
    assert.deepEqual(codesOf(responses['503']), ['server_busy', 'database_unavailable', 'temporal_unavailable']);
    assert.equal(responses['409'].content['application/json'].schema.allOf[0], ERROR_REF);
    assert.equal(
      responses['409'].description,
      `\`media_ingestion_active\`: ${ERROR_CATALOGUE.media_ingestion_active.message}\n\n\`asset_already_completed\`: ${ERROR_CATALOGUE.asset_already_completed.message}`,
    );
  });

  it('keeps a route response with a special body, and adds the codes to one with the Error schema (a note)', () => {
    const special = { type: 'object', properties: { recordingId: { type: 'string' } } };
    const responses = operationOf({
      ...base,
      path: '/things',
      responses: {
        200: { description: 'OK' },
        409: { description: 'Recovery', schema: special },
        503: { description: 'Nothing was stored; retry', schema: ERROR_REF },
      },
      errors: ['recording_external_id_conflict'],
    });
    assert.deepEqual(Object.keys(responses), ['200', '409', '503']);
    assert.deepEqual(responses['409'], { description: 'Recovery', content: { 'application/json': { schema: special } } });
    assert.match(responses['503'].description, /^Nothing was stored; retry\n\n`database_unavailable`: /);
    assert.deepEqual(codesOf(responses['503']), ['database_unavailable', 'temporal_unavailable']);
  });
});

describe('the error table (docs/errors.md)', () => {
  it('is the table generated from the catalogue: `npm run docs:errors` after changing src/error-catalogue.ts', () => {
    const doc = readFileSync(path.join(PROJECT_ROOT, 'docs', 'errors.md'), 'utf8');
    assert.equal(doc, withErrorReference(doc));
    const table = errorReference();
    for (const key of ERROR_KEYS) assert.ok(table.includes(`| ${ERROR_CATALOGUE[key].status} | \`${errorCodeOf(key)}\` |`), key);
  });
});

describe('activity failure types (src/domain/failure-types.ts)', () => {
  it('are distinct strings, and each ApplicationFailure type in activities/ and workflows/ is named through the enum', () => {
    assert.equal(new Set(FAILURE_TYPES).size, FAILURE_TYPES.length);
    for (const file of [...sources('activities'), ...sources('workflows')]) {
      const text = readFileSync(file, 'utf8');
      assert.doesNotMatch(text, /ApplicationFailure\.create\(\{\s*type:\s*'/, file);
      assert.doesNotMatch(text, /\bfailure\('/, file);
    }
  });

  it("read as the asset's errorCode as stored histories recorded them", () => {
    assert.equal(assetErrorCodeOf(FailureType.assetTooLarge), 'asset_too_large');
    assert.equal(assetErrorCodeOf(FailureType.uploadFailed), 'upload_failed');
    assert.equal(assetErrorCodeOf(FailureType.ffmpegUnavailable), 'processing_failed');
    assert.equal(assetErrorCodeOf(null), 'processing_failed');
    assert.equal(assetErrorCodeOf(undefined), 'processing_failed');
  });
});
