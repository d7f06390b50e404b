import { presentPersonErasure } from '../../contracts/person-erasures.js';
import { erasePerson, findErasure } from '../../people/erasure.js';
import { flags, str } from '../args.js';
import type { CliContext } from '../context.js';
import { requireOrganization } from './tenancy.js';

/** `person erase --org O --person P`: as POST /v3/rest/people/{P}/erase, requested by `cli`. */
export async function personErase(ctx: CliContext, argv: string[]) {
  const f = flags(argv, { org: 'string', person: 'string' });
  const org = await requireOrganization(ctx, str(f, 'org'));
  const pool = await ctx.db();
  const logger = { warn: (_o: object, message: string) => void process.stderr.write(`note: ${message}\n`) };
  const erase = (temporal: Parameters<typeof erasePerson>[0]['temporal']) =>
    erasePerson({ pool, temporal, config: ctx.config, logger }, org.id, str(f, 'person'), 'cli');
  const erasure = await ctx.withTemporal(erase, (why) => {
    process.stderr.write(`note: the erasure's workflow was not started (${why ?? 'no Temporal here'}); the media reconciler starts it\n`);
    return erase(null);
  });
  return presentPersonErasure(erasure);
}

/** `person erasure --org O --erasure E`: the erasure's audit record and progress. */
export async function personErasure(ctx: CliContext, argv: string[]) {
  const f = flags(argv, { org: 'string', erasure: 'string' });
  const org = await requireOrganization(ctx, str(f, 'org'));
  return presentPersonErasure(await findErasure(await ctx.db(), org.id, str(f, 'erasure')));
}
