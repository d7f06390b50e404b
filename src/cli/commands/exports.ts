import { open } from 'node:fs/promises';
import { exportOrganization, streamWriter } from '../../lifecycle/export.js';
import { ImportRefused, importOrganization, ndjsonLines } from '../../lifecycle/import.js';
import { flags, optStr, str } from '../args.js';
import { CliError, OutputWritten, type CliContext } from '../context.js';
import { requireOrganization } from './tenancy.js';

/** `org export --org O > file.ndjson`: the export as GET /v3/rest/organization/export streams it, on stdout; the counts on stderr. */
export async function orgExport(ctx: CliContext, argv: string[]) {
  const f = flags(argv, { org: 'string' });
  const org = await requireOrganization(ctx, str(f, 'org'));
  const counts = await exportOrganization(await ctx.db(), org.id, streamWriter(process.stdout));
  process.stderr.write(`exported ${JSON.stringify(counts)}\n`);
  return new OutputWritten();
}

/** `org import --org O [--file F]` (stdin without --file): an export into an empty organization, all or nothing. */
export async function orgImport(ctx: CliContext, argv: string[]) {
  const f = flags(argv, { org: 'string', file: 'string' });
  const org = await requireOrganization(ctx, str(f, 'org'));
  const file = optStr(f, 'file');
  // Opened first: a file that cannot be read is a CLI error, not a stream's unhandled 'error' event.
  const handle = file
    ? await open(file).catch((error: NodeJS.ErrnoException) => {
        throw new CliError(`cannot read ${file}: ${error.code === 'ENOENT' ? 'no such file' : (error.code ?? error.message)}`);
      })
    : null;
  const input = handle ? handle.createReadStream() : process.stdin;
  try {
    return await importOrganization(await ctx.db(), org.id, ndjsonLines(input));
  } catch (error) {
    if (error instanceof ImportRefused) throw new CliError(error.message);
    throw error;
  } finally {
    if (handle) input.destroy();
  }
}
