import type { WorkflowHandle } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/paths.js';

/** Where the replay suite's histories are kept. */
export const HISTORIES_DIR = path.join(PROJECT_ROOT, 'test', 'replay', 'histories');

/** Writes a workflow's history (by default its latest run's) to test/replay/histories/<name>. */
export async function saveHistory(name: string, handle: WorkflowHandle): Promise<void> {
  const history = await handle.fetchHistory();
  await writeFile(path.join(HISTORIES_DIR, name), `${historyToJSON(history)}\n`);
  process.stdout.write(`wrote ${name} (${history.events?.length} events)\n`);
}
