import type { WorkflowHandle } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/paths.js';

/** Where the replay suite's histories are kept: one folder per workflow, named like its folder in workflows/. */
export const HISTORIES_DIR = path.join(PROJECT_ROOT, 'test', 'replay', 'histories');

const refusal = (file: string) =>
  new Error(
    `${path.relative(PROJECT_ROOT, file)} exists: stored histories are not overwritten (runs of that shape must keep replaying). ` +
      'Capture the new shape under a new scenario name (e.g. v2), or delete the old file in the same commit if no such run can be open.',
  );

/**
 * Writes a workflow's history (the run the handle names, by default its latest) to
 * test/replay/histories/<workflow>/<scenario>.json. A stored history is never overwritten: it is
 * the proof that runs of its shape still replay, so a new shape gets a new scenario name.
 */
export async function saveHistory(workflow: string, scenario: string, handle: WorkflowHandle): Promise<string> {
  const dir = path.join(HISTORIES_DIR, workflow);
  const file = path.join(dir, `${scenario}.json`);
  if (existsSync(file)) throw refusal(file);
  const history = await handle.fetchHistory();
  await mkdir(dir, { recursive: true });
  try {
    await writeFile(file, `${historyToJSON(history)}\n`, { flag: 'wx' });
  } catch (error) {
    throw (error as NodeJS.ErrnoException).code === 'EEXIST' ? refusal(file) : error;
  }
  process.stdout.write(`wrote ${path.relative(PROJECT_ROOT, file)} (${history.events?.length} events)\n`);
  return file;
}
