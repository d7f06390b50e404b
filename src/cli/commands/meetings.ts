import { describeMeetingProviders } from '../../providers/describe.js';
import { flags } from '../args.js';
import { CliError, type CliContext } from '../context.js';
import { diagnostics } from './doctor.js';

/**
 * The meeting recorder and transcription engine of the running stack, as its worker reports them
 * (through the diagnostics workflow, like `doctor`); `--config`: what this command's own
 * configuration would build, to check an environment before a worker runs with it.
 */
export async function meetingProviders(ctx: CliContext, argv: string[]) {
  const f = flags(argv, { config: 'boolean' });
  if (f.config === true) return { source: 'configuration', ...describeMeetingProviders(ctx.config) };
  const { worker } = (await diagnostics(ctx, 'intake meeting-providers')).result;
  if (!worker.meetingProviders)
    throw new CliError(`the worker that answered (${worker.identity}) does not report its meeting providers: it runs an older release`);
  return { source: 'worker', worker: worker.identity, ...worker.meetingProviders };
}
