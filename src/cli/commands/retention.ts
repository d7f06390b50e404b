import { sweepAllDoomedSessions } from '../../agents/session-deletion.js';
import { purgeExpiredModels } from '../../db/repositories/oauth-models.js';
import { isUuid } from '../../db/uuid.js';
import { AUTHORIZATION_PURGE_BATCH, EVENT_PURGE_BATCH, IDEMPOTENCY_KEY_PURGE_BATCH } from '../../../workflows/retention-sweep/contract.js';
import { purgeExpiredKeys } from '../../db/repositories/idempotency-keys.js';
import { IDEMPOTENCY_RETENTION_SECONDS } from '../../idempotency/service.js';
import { purgeEventsBefore } from '../../db/repositories/domain-events.js';
import { eventRetentionCutoff, maintainEventPartitions } from '../../../activities/retention.js';
import { CliError, type CliContext } from '../context.js';
import { flags, optStr } from '../args.js';

const BATCH = 25;

/**
 * Runs the retention sweep now, in this process (the same deletion the scheduled sweep runs):
 * every conversation older than its application's retention, or only one organization's; without
 * --org, the MCP authorization server's expired rows and the domain events past
 * DOMAIN_EVENT_RETENTION_DAYS and the idempotency keys past their 24 hours too.
 */
export async function retentionSweep(ctx: CliContext, argv: string[]) {
  const f = flags(argv, { org: 'string' });
  const org = optStr(f, 'org');
  if (org !== undefined && !isUuid(org)) throw new CliError('--org must be an organization UUID', 2);
  const db = await ctx.db();
  if (org !== undefined) return { deletedSessions: await sweepAllDoomedSessions(db, BATCH, org) };
  // A week's partition holds every organization's sessions: dropped only by the sweep of all of them.
  const partitions = await maintainEventPartitions(db);
  const deleted = partitions.deletedSessions + (await sweepAllDoomedSessions(db, BATCH));
  let purged = 0;
  for (;;) {
    const n = await purgeExpiredModels(db, AUTHORIZATION_PURGE_BATCH);
    purged += n;
    if (n < AUTHORIZATION_PURGE_BATCH) break;
  }
  const before = eventRetentionCutoff(ctx.config.domainEvents.retentionDays);
  let events = 0;
  for (;;) {
    const n = await purgeEventsBefore(db, before, EVENT_PURGE_BATCH);
    events += n;
    if (n < EVENT_PURGE_BATCH) break;
  }
  let keys = 0;
  for (;;) {
    const n = await purgeExpiredKeys(db, IDEMPOTENCY_RETENTION_SECONDS, IDEMPOTENCY_KEY_PURGE_BATCH);
    keys += n;
    if (n < IDEMPOTENCY_KEY_PURGE_BATCH) break;
  }
  return {
    deletedSessions: deleted,
    ...(partitions.dropped ? { droppedPartitions: partitions.dropped } : {}),
    purgedAuthorizations: purged,
    ...(events ? { purgedEvents: events } : {}),
    ...(keys ? { purgedIdempotencyKeys: keys } : {}),
  };
}
