import { strict as assert } from 'node:assert';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { PROJECT_ROOT } from '../../src/paths.js';

/**
 * The layer rules (README, "Layer rules") as `npm run lint` applies them: the project's ESLint
 * configuration lints one planted import at a path inside the folder it is written for. Only the
 * import rule runs, without type information (it needs none), so this takes about a second.
 */
const eslint = new ESLint({
  cwd: PROJECT_ROOT,
  overrideConfig: [tseslint.configs.disableTypeChecked],
  ruleFilter: ({ ruleId }) => ruleId === 'no-restricted-imports',
});

async function importErrors(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(`${code}\n`, { filePath: `${PROJECT_ROOT}/${filePath}` });
  assert.ok(result, 'ESLint returned no result');
  return result.messages.map((m) => `${m.ruleId}: ${m.message}`);
}

async function assertRefused(filePath: string, code: string, because: string): Promise<void> {
  const errors = await importErrors(filePath, code);
  assert.equal(errors.length, 1, `${filePath}: ${code}\n${errors.join('\n')}`);
  assert.match(errors[0]!, /^no-restricted-imports: /);
  assert.ok(errors[0]!.includes(because), `${filePath}: ${code}\n${errors[0]}`);
}

async function assertAllowed(filePath: string, code: string): Promise<void> {
  assert.deepEqual(await importErrors(filePath, code), [], `${filePath}: ${code}`);
}

describe('layer rules (lint)', () => {
  it('lets only the composition roots import api/ and activities/', async () => {
    const because = 'Only the composition roots';
    await assertRefused('src/temporal/planted.ts', "import { createActivities } from '../../activities/index.js';", because);
    await assertRefused('src/recordings/planted.ts', "import { buildApp } from '../../api/app.js';", because);
    await assertRefused('activities/planted.ts', "import { buildApp } from '../api/app.js';", because);
    await assertRefused('api/planted.ts', "import type { ActivityDeps } from '../activities/index.js';", because);
    for (const root of ['src/main', 'src/cli', 'src/dev']) {
      await assertAllowed(`${root}/planted.ts`, "import { buildApp } from '../../api/app.js';");
      await assertAllowed(`${root}/planted.ts`, "import { createActivities } from '../../activities/index.js';");
    }
  });

  it('lets api/, src/ and activities/ import only workflow contracts', async () => {
    const because = 'import only workflow contracts';
    await assertRefused('src/agents/planted.ts', "import { SessionState } from '../../workflows/agent-session/state.js';", because);
    await assertRefused('src/main/planted.ts', "import * as workflows from '../../workflows/index.js';", because);
    await assertRefused(
      'api/operator/planted.ts',
      "import { agentSessionWorkflow } from '../../workflows/agent-session/workflow.js';",
      because,
    );
    await assertRefused('activities/planted.ts', "import type { SessionState } from '../workflows/agent-session/state.js';", because);
    await assertAllowed('src/agents/planted.ts', "import { agentSessionWorkflowId } from '../../workflows/agent-session/contract.js';");
    await assertAllowed('src/temporal/planted.ts', "export * from '../../workflows/search-attributes.js';");
    await assertAllowed(
      'api/recordings/uploads/planted.ts',
      "import { uploadCancelledSignal } from '../../../workflows/media-ingestion/contract.js';",
    );
  });

  it('lets repositories import only src/domain, the base modules, each other and libraries', async () => {
    const because = 'Repositories import only src/domain';
    await assertRefused('src/db/repositories/planted.ts', "import { planProcessing } from '../../agents/processing.js';", because);
    await assertRefused(
      'src/db/repositories/planted.ts',
      "import type { ExtractedSignal } from '../../providers/signal-extractor/types.js';",
      because,
    );
    await assertRefused(
      'src/db/repositories/planted.ts',
      "import type { StoredProgress } from '../../../workflows/agent-session/contract.js';",
      because,
    );
    for (const allowed of [
      "import type { StoredProgress } from '../../domain/agent-processing-plan.js';",
      "import { isUuid } from '../uuid.js';",
      "import { NotFoundError } from '../../errors.js';",
      "import { findUser } from './users.js';",
      "import { sql } from 'slonik';",
    ])
      await assertAllowed('src/db/repositories/planted.ts', allowed);
  });

  it('keeps src/config.ts free of feature folders', async () => {
    const because = 'src/config.ts imports no feature folder';
    await assertRefused('src/config.ts', "import { isUuid } from './db/uuid.js';", because);
    await assertRefused('src/config.ts', "import type { RecorderConfig } from './providers/recorder/index.js';", because);
    await assertAllowed('src/config.ts', "import { deriveKey } from './keys.js';");
  });

  it('keeps src/domain pure: only itself, the base modules and libraries', async () => {
    const because = 'src/domain holds pure rules';
    await assertRefused('src/domain/planted.ts', "import { deriveKey } from '../auth/secrets.js';", because);
    await assertRefused('src/domain/sanitize/planted.ts', "import { createLogger } from '../../telemetry/tracing.js';", because);
    await assertAllowed('src/domain/sanitize/planted.ts', "import { parseJsonl } from '../coding-sessions/jsonl.js';");
    await assertAllowed('src/domain/planted.ts', "import { ValidationError } from '../errors.js';");
  });

  it('lets nothing outside test/ import test/: bench/ shares harness/ with the tests', async () => {
    const because = 'Only tests import test/';
    await assertRefused('bench/planted.ts', "import { reporter } from '../test/helpers/reporter.js';", because);
    await assertRefused('harness/planted.ts', "import { recordingsContext } from '../test/helpers/recordings.js';", because);
    await assertRefused('src/dev/planted.ts', "import { seed } from '../../test/helpers/feedback.js';", because);
    await assertAllowed('bench/planted.ts', "import { createTestDatabase } from '../harness/stack.js';");
    await assertAllowed('test/integration/planted.ts', "import { seed } from '../helpers/feedback.js';");
  });

  it('keeps api/ off Temporal, and SQL in src/db', async () => {
    await assertRefused('api/planted.ts', "import type { Client } from '@temporalio/client';", 'api/ never talks to Temporal');
    for (const file of ['api/feedback/planted.ts', 'src/recordings/planted.ts', 'activities/planted.ts', 'src/main/planted.ts']) {
      await assertRefused(file, "import { sql } from 'slonik';", 'SQL lives in src/db/repositories');
    }
    await assertAllowed('src/db/repositories/planted.ts', "import { sql } from 'slonik';");
    await assertAllowed('src/db/planted.ts', "import { sql } from 'slonik';");
    await assertAllowed('api/feedback/planted.ts', "import type { DatabasePool } from 'slonik';");
    await assertAllowed('api/feedback/planted.ts', "import { toUtcInstant } from '../../src/domain/time.js';");
  });

  it('keeps workflow code in the sandbox: from src/ only src/domain, activity types only', async () => {
    const file = 'workflows/agent-session/planted.ts';
    await assertRefused(
      file,
      "import { createLogger } from '../../src/logger.js';",
      'Workflows import from src/ only the pure rules of src/domain',
    );
    await assertRefused(
      file,
      "import type { BotStatus } from '../../src/providers/recorder/types.js';",
      'only the pure rules of src/domain',
    );
    await assertRefused(
      file,
      "import { createAgentSessionActivities } from '../../activities/agent-sessions.js';",
      'only the types of activities',
    );
    await assertRefused(file, "import { readFile } from 'node:fs/promises';", 'Node built-ins are not allowed');
    await assertRefused(file, "import { sql } from 'slonik';", 'No I/O in workflow code');
    await assertAllowed(file, "import { planProcessing } from '../../src/domain/agent-processing-plan.js';");
    await assertAllowed(file, "import type { AgentSessionActivities } from '../../activities/agent-sessions.js';");
  });
});
