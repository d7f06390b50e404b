import { deleteExpiredSessions } from '../../db/repositories/agent-retention.js';
import { isUuid } from '../../db/uuid.js';
import { CliError, type CliContext } from '../context.js';
import { flags, optStr } from '../args.js';

const BATCH = 25;

/**
 * Runs the retention sweep now, in this process (the same deletion the scheduled sweep runs):
 * every conversation older than its application's retention, or only one organization's.
 */
export async function retentionSweep(ctx: CliContext, argv: string[]) {
  const f = flags(argv, { org: 'string' });
  const org = optStr(f, 'org');
  if (org !== undefined && !isUuid(org)) throw new CliError('--org must be an organization UUID', 2);
  const db = await ctx.db();
  let deleted = 0;
  for (;;) {
    const n = await deleteExpiredSessions(db, BATCH, org);
    deleted += n;
    if (n < BATCH) return { deletedSessions: deleted };
  }
}
