import { loadConfig } from '../config.js';
import { isDatabaseUnavailable } from '../dependency-errors.js';
import { apiKeyCreate, apiKeyRevoke, tokenIssue } from './commands/credentials.js';
import { doctor } from './commands/doctor.js';
import { creditsAdd, orgCreate, userCreate } from './commands/tenancy.js';
import { CliContext, CliError } from './context.js';

type Command = (ctx: CliContext, argv: string[]) => Promise<object>;

/** `intake <group> <action> [--flags]`: a stable contract; one JSON object on stdout. */
const COMMANDS: Record<string, Command> = {
  'org create': orgCreate,
  'user create': userCreate,
  'api-key create': apiKeyCreate,
  'api-key revoke': apiKeyRevoke,
  'token issue': tokenIssue,
  'credits add': creditsAdd,
  doctor: (ctx) => doctor(ctx),
};

const USAGE = `usage: intake <command> [--flags]
  org create --name N [--credits C] [--no-recording]
  api-key create --org O [--scopes a,b] [--name N]
  api-key revoke --id K
  user create --org O --email E [--first-name F] [--last-name L] [--role member|admin]
  token issue --user U [--ttl-seconds S]
  credits add --org O --amount A [--reason R]
  doctor`;

function resolve(argv: string[]): { command: Command; rest: string[] } {
  const two = argv.slice(0, 2).join(' ');
  if (COMMANDS[two]) return { command: COMMANDS[two], rest: argv.slice(2) };
  const one = argv[0] ?? '';
  if (COMMANDS[one]) return { command: COMMANDS[one], rest: argv.slice(1) };
  throw new CliError(argv.length ? `unknown command: ${argv.join(' ')}\n${USAGE}` : USAGE, 2);
}

export async function runCli(argv: string[], env: Record<string, string | undefined> = process.env): Promise<number> {
  let ctx: CliContext | undefined;
  try {
    const { command, rest } = resolve(argv);
    ctx = new CliContext(loadConfig(env));
    const result = await command(ctx, rest);
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return 0;
  } catch (error) {
    const code = error instanceof CliError ? error.exitCode : 1;
    const message = isDatabaseUnavailable(error)
      ? `the database is not reachable (${(error as Error).message}); is \`npm start\` running, or DATABASE_URL right?`
      : (error as Error).message;
    process.stderr.write(`intake: ${message}\n`);
    return code;
  } finally {
    await ctx?.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.exitCode = await runCli(process.argv.slice(2));
}
