import { loadConfig } from '../config.js';
import { isDatabaseUnavailable } from '../dependency-errors.js';
import { ValidationError } from '../errors.js';
import { agentAppCreate, agentAppRevoke, agentAppSecret, agentAppUpdate } from './commands/agent-apps.js';
import { apiKeyCreate, apiKeyRevoke, tokenIssue, tokenRevoke } from './commands/credentials.js';
import { doctor } from './commands/doctor.js';
import { grantList, grantRevoke } from './commands/grants.js';
import { meetingProviders } from './commands/meetings.js';
import { batchCreate, folderCreate, metadataFieldCreate } from './commands/recordings.js';
import { retentionSweep } from './commands/retention.js';
import { creditsAdd, orgCreate, orgUpdate, userCreate, userSetPassword } from './commands/tenancy.js';
import { webhookCreate, webhookDelete, webhookList, webhookRotateSecret, webhookShow, webhookUpdate } from './commands/webhooks.js';

import { webhookDeliveries, webhookRedeliver, webhookTest } from './commands/webhook-deliveries.js';
import { CliContext, CliError } from './context.js';

type Command = (ctx: CliContext, argv: string[]) => Promise<object>;

/** `intake <group> <action> [--flags]`: a stable contract; one JSON object on stdout. */
const COMMANDS: Record<string, Command> = {
  'org create': orgCreate,
  'org update': orgUpdate,
  'user create': userCreate,
  'user set-password': userSetPassword,
  'api-key create': apiKeyCreate,
  'api-key revoke': apiKeyRevoke,
  'grant list': grantList,
  'grant revoke': grantRevoke,
  'token issue': tokenIssue,
  'token revoke': tokenRevoke,
  'credits add': creditsAdd,
  'agent-app create': agentAppCreate,
  'agent-app update': agentAppUpdate,
  'agent-app secret': agentAppSecret,
  'agent-app revoke': agentAppRevoke,
  'webhook create': webhookCreate,
  'webhook list': webhookList,
  'webhook show': webhookShow,
  'webhook update': webhookUpdate,
  'webhook delete': webhookDelete,
  'webhook rotate-secret': webhookRotateSecret,
  'webhook deliveries': webhookDeliveries,
  'webhook redeliver': webhookRedeliver,
  'webhook test': webhookTest,
  'retention sweep': retentionSweep,
  'folder create': folderCreate,
  'batch create': batchCreate,
  'metadata-field create': metadataFieldCreate,
  doctor: (ctx) => doctor(ctx),
  'meeting-providers': async (ctx, argv) => meetingProviders(ctx, argv),
};

const USAGE = `usage: intake <command> [--flags]
  org create --name N [--credits C] [--no-recording]
  api-key create --org O [--scopes a,b] [--name N]   (default: every scope but admin and webhooks:manage)
  api-key revoke --id K
  user create --org O --email E [--first-name F] [--last-name L] [--role member|admin] [--password-stdin]
  user set-password (--user U | --org O --email E) --password-stdin
  grant list --user U                                 (the MCP clients the user approved)
  grant revoke --user U (--grant G | --all)
  token issue --user U [--ttl-seconds S]
  token revoke --token T | --user U
  credits add --org O --amount A [--reason R]
  org update --org O [--agent-chats on|off] [--recording on|off]
  agent-app create --org O --name N --agent-key K
  agent-app update --app A [--name N] [--status active|disabled] [--content-capture on|off] [--redact-fields a,b]
                   [--redact-patterns p1,p2] [--retention-days D|none] [--environments a,b|any] [--access workspace|users:U1,U2]
  agent-app secret --app A
  agent-app revoke --credential C
  webhook create --org O --url U [--event-types a,b|all] [--description D] [--enabled on|off]   (prints the secret, once)
  webhook list --org O
  webhook show --org O --id E
  webhook update --org O --id E [--url U] [--event-types a,b|all] [--description D] [--enabled on|off]
  webhook delete --org O --id E
  webhook rotate-secret --org O --id E             (prints the new secret; the previous one signs for 24 hours more)
  webhook deliveries --endpoint E [--status pending|succeeded|failed] [--limit N] [--delivery D]
  webhook redeliver --endpoint E --delivery D
  webhook test --endpoint E
  retention sweep [--org O]
  folder create --org O --name N
  batch create --user U
  metadata-field create --org O --name N --type boolean|date|datetime|float|integer|json|string
  meeting-providers [--config]
  doctor`;

function resolve(argv: string[]): { command: Command; rest: string[] } {
  const two = argv.slice(0, 2).join(' ');
  if (COMMANDS[two]) return { command: COMMANDS[two], rest: argv.slice(2) };
  const one = argv[0] ?? '';
  if (COMMANDS[one]) return { command: COMMANDS[one], rest: argv.slice(1) };
  throw new CliError(argv.length ? `unknown command: ${argv.join(' ')}\n${USAGE}` : USAGE, 2);
}

/** A validation error names each bad field, as the REST body would. */
function describe(error: unknown): string {
  const message = (error as Error).message;
  if (!(error instanceof ValidationError)) return message;
  return `${message} ${error.errors.map((e) => `${e.path.replace(/^body\./, '')} ${e.message}`).join('; ')}`;
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
      : describe(error);
    process.stderr.write(`intake: ${message}\n`);
    return code;
  } finally {
    await ctx?.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.exitCode = await runCli(process.argv.slice(2));
}
