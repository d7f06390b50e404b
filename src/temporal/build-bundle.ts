import { bundleWorkflowCode, type Logger } from '@temporalio/worker';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { failureConverterModule, PROJECT_ROOT, workflowsEntry } from '../paths.js';
import { WORKFLOW_INTERCEPTOR_MODULES } from './tracing.js';
import { isEntryPoint } from '../entry-point.js';

/** `npm run build` writes the workflow bundle that production workers load (WORKFLOW_BUNDLE_PATH). */
export const DEFAULT_BUNDLE_PATH = path.join(PROJECT_ROOT, 'dist', 'workflow-bundle.js');

/**
 * What every workflow bundle is made of (production's and the tests'): the workflows, their
 * interceptors and the failure converter that encodes failure messages (see `codec.ts`).
 */
export function workflowBundleOptions() {
  return {
    workflowsPath: workflowsEntry(),
    workflowInterceptorModules: [...WORKFLOW_INTERCEPTOR_MODULES],
    failureConverterPath: failureConverterModule(),
  };
}

export async function buildWorkflowBundle(outPath = DEFAULT_BUNDLE_PATH, logger?: Logger): Promise<string> {
  const { code } = await bundleWorkflowCode({ ...workflowBundleOptions(), ...(logger ? { logger } : {}) });
  await mkdir(path.dirname(outPath), { recursive: true });
  await writeFile(outPath, code);
  return outPath;
}

if (isEntryPoint(import.meta.url)) {
  // No top-level await: tests import this module, and mocha require()s what it can.
  buildWorkflowBundle(process.argv[2] ?? DEFAULT_BUNDLE_PATH).then(
    (out) => process.stdout.write(`${JSON.stringify({ workflowBundle: out })}\n`),
    (error: unknown) => {
      process.stderr.write(`build-bundle: ${(error as Error).message}\n`);
      process.exitCode = 1;
    },
  );
}
