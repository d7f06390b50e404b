import { exportOrganization, streamWriter } from '../../lifecycle/export.js';
import { flags, str } from '../args.js';
import { OutputWritten, type CliContext } from '../context.js';
import { requireOrganization } from './tenancy.js';

/** `org export --org O > file.ndjson`: the export as GET /v3/rest/organization/export streams it, on stdout; the counts on stderr. */
export async function orgExport(ctx: CliContext, argv: string[]) {
  const f = flags(argv, { org: 'string' });
  const org = await requireOrganization(ctx, str(f, 'org'));
  const counts = await exportOrganization(await ctx.db(), org.id, streamWriter(process.stdout));
  process.stderr.write(`exported ${JSON.stringify(counts)}\n`);
  return new OutputWritten();
}
