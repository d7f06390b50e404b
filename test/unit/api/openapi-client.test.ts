import { strict as assert } from 'node:assert';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { PROJECT_ROOT } from '../../../src/paths.js';
import { openApiDocument } from './openapi-document.js';

describe('a client generated from /openapi.json', () => {
  it('compiles a program that reads every field the API returns (openapi-typescript types)', async () => {
    const doc = await openApiDocument();
    const dir = mkdtempSync(path.join(tmpdir(), 'intake-openapi-client-'));
    try {
      const types = astToString(await openapiTS(doc as never));
      writeFileSync(path.join(dir, 'schema.ts'), types);
      copyFileSync(path.join(PROJECT_ROOT, 'test', 'fixtures', 'openapi-client', 'reads.ts.txt'), path.join(dir, 'reads.ts'));
      const program = ts.createProgram([path.join(dir, 'reads.ts')], {
        strict: true,
        noEmit: true,
        noUncheckedIndexedAccess: true,
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        skipLibCheck: true,
        types: [],
      });
      const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      assert.deepEqual(diagnostics, []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
