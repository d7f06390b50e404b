import { loadConfig } from '../config.js';
import { isDatabaseUnavailable } from '../dependency-errors.js';
import { ValidationError } from '../errors.js';
import { packageVersion } from '../paths.js';
import { CliContext, CliError, OutputWritten } from './context.js';
import { isEntryPoint } from '../entry-point.js';

type Command = (ctx: CliContext, argv: string[]) => Promise<object>;

/**
 * A command whose module is loaded when it runs: a command loads only what it uses (Temporal's
 * client, the API's schemas), so that `intake --help` and a database command start fast.
 */
function command<M extends Record<K, Command>, K extends keyof M>(load: () => Promise<M>, name: K): Command {
  return async (ctx, argv) => (await load())[name](ctx, argv);
}

const agentApps = () => import('./commands/agent-apps.js');
const credentials = () => import('./commands/credentials.js');
const doctor = () => import('./commands/doctor.js');
const orgExports = () => import('./commands/exports.js');
const grants = () => import('./commands/grants.js');
const meetings = () => import('./commands/meetings.js');
const people = () => import('./commands/people.js');
const recordings = () => import('./commands/recordings.js');
const retention = () => import('./commands/retention.js');
const tenancy = () => import('./commands/tenancy.js');
const webhookDeliveries = () => import('./commands/webhook-deliveries.js');
const webhooks = () => import('./commands/webhooks.js');

/** A command: what it runs, and its flags as `intake <command> --help` prints them (continuation lines indented). */
interface CommandSpec {
  run: Command;
  usage: string;
  /** What the usage alone does not say, printed after it. */
  note?: string;
}

const PAGE = '[--page N] [--limit L]';

/** `intake <group> <action> [--flags]`: a stable contract; one JSON object on stdout. */
const COMMANDS: Record<string, CommandSpec> = {
  'org create': { run: command(tenancy, 'orgCreate'), usage: '--name N [--credits C] [--no-recording]' },
  'org list': { run: command(tenancy, 'orgList'), usage: `${PAGE}`, note: 'every organization, oldest first' },
  'org show': { run: command(tenancy, 'orgShow'), usage: '--org O', note: 'with what it holds, counted' },
  'org export': {
    run: command(orgExports, 'orgExport'),
    usage: '--org O > file.ndjson',
    note: "the organization's data as NDJSON on stdout (counts on stderr)",
  },
  'org import': {
    run: command(orgExports, 'orgImport'),
    usage: '--org O [--file F]',
    note: 'an export (F, or stdin) into an organization without data; all or nothing, with new ids',
  },
  'org update': { run: command(tenancy, 'orgUpdate'), usage: '--org O [--agent-chats on|off] [--recording on|off]' },
  'user create': {
    run: command(tenancy, 'userCreate'),
    usage: '--org O --email E [--first-name F] [--last-name L] [--role member|admin] [--password-stdin]',
  },
  'user list': { run: command(tenancy, 'userList'), usage: `[--org O] [--email E] ${PAGE}`, note: '--email: any case, every organization' },
  'user show': { run: command(tenancy, 'userShow'), usage: '--user U' },
  'person erase': {
    run: command(people, 'personErase'),
    usage: '--org O --person P',
    note: 'P: the person id or uuid; the person becomes a tombstone at once, a workflow erases their e-mail everywhere',
  },
  'person erasure': {
    run: command(people, 'personErasure'),
    usage: '--org O --erasure E',
    note: 'whether an erasure finished, and what it changed',
  },
  'user set-password': { run: command(tenancy, 'userSetPassword'), usage: '(--user U | --org O --email E) --password-stdin' },
  'api-key create': {
    run: command(credentials, 'apiKeyCreate'),
    usage: '--org O [--scopes a,b] [--name N]',
    note: 'default: every scope but admin and webhooks:manage',
  },
  'api-key list': {
    run: command(credentials, 'apiKeyList'),
    usage: `--org O ${PAGE}`,
    note: 'revoked keys too; never the keys themselves',
  },
  'api-key revoke': { run: command(credentials, 'apiKeyRevoke'), usage: '--id K' },
  'grant list': { run: command(grants, 'grantList'), usage: '--user U', note: 'the MCP clients the user approved' },
  'grant revoke': { run: command(grants, 'grantRevoke'), usage: '--user U (--grant G | --all)' },
  'token issue': { run: command(credentials, 'tokenIssue'), usage: '--user U [--ttl-seconds S]' },
  'token revoke': { run: command(credentials, 'tokenRevoke'), usage: '--token T | --user U' },
  'credits add': { run: command(tenancy, 'creditsAdd'), usage: '--org O --amount A [--reason R]' },
  'agent-app create': { run: command(agentApps, 'agentAppCreate'), usage: '--org O --name N --agent-key K' },
  'agent-app list': { run: command(agentApps, 'agentAppList'), usage: `--org O ${PAGE}` },
  'agent-app show': { run: command(agentApps, 'agentAppShow'), usage: '--app A', note: 'with its ingest credentials, never their secrets' },
  'agent-app update': {
    run: command(agentApps, 'agentAppUpdate'),
    usage:
      '--app A [--name N] [--status active|disabled] [--content-capture on|off] [--redact-fields a,b]\n' +
      '    [--redact-patterns p1,p2] [--retention-days D|none] [--environments a,b|any] [--access workspace|users:U1,U2]',
  },
  'agent-app secret': { run: command(agentApps, 'agentAppSecret'), usage: '--app A' },
  'agent-app revoke': { run: command(agentApps, 'agentAppRevoke'), usage: '--credential C' },
  'webhook create': {
    run: command(webhooks, 'webhookCreate'),
    usage: '--org O --url U [--event-types a,b|all] [--description D] [--enabled on|off]',
    note: 'prints the secret, once',
  },
  'webhook list': { run: command(webhooks, 'webhookList'), usage: '--org O' },
  'webhook show': { run: command(webhooks, 'webhookShow'), usage: '--org O --id E' },
  'webhook update': {
    run: command(webhooks, 'webhookUpdate'),
    usage: '--org O --id E [--url U] [--event-types a,b|all] [--description D] [--enabled on|off]',
  },
  'webhook delete': { run: command(webhooks, 'webhookDelete'), usage: '--org O --id E' },
  'webhook rotate-secret': {
    run: command(webhooks, 'webhookRotateSecret'),
    usage: '--org O --id E',
    note: 'prints the new secret; the previous one signs for 24 hours more',
  },
  'webhook deliveries': {
    run: command(webhookDeliveries, 'webhookDeliveries'),
    usage: '--endpoint E [--status pending|succeeded|failed] [--limit N] [--delivery D]',
  },
  'webhook redeliver': { run: command(webhookDeliveries, 'webhookRedeliver'), usage: '--endpoint E --delivery D' },
  'webhook test': { run: command(webhookDeliveries, 'webhookTest'), usage: '--endpoint E' },
  'retention sweep': { run: command(retention, 'retentionSweep'), usage: '[--org O]' },
  'folder create': { run: command(recordings, 'folderCreate'), usage: '--org O --name N' },
  'batch create': { run: command(recordings, 'batchCreate'), usage: '--user U' },
  'metadata-field create': {
    run: command(recordings, 'metadataFieldCreate'),
    usage: '--org O --name N --type boolean|date|datetime|float|integer|json|string',
  },
  'meeting-providers': { run: command(meetings, 'meetingProviders'), usage: '[--config]' },
  doctor: { run: command(doctor, 'doctor'), usage: '' },
};

function usageLine(name: string): string {
  const { usage, note } = COMMANDS[name]!;
  const line = `  ${name}${usage ? ` ${usage}` : ''}`;
  return note ? `${line}${line.includes('\n') ? ' ' : ' '.repeat(Math.max(1, 56 - line.length))}(${note})` : line;
}

/** What `intake --help` prints. */
export const USAGE = [
  'usage: intake <command> [--flags]   (one JSON object on stdout; errors on stderr, exit 1, or 2 for usage)',
  '       intake <command> --help',
  '       intake --version',
  ...Object.keys(COMMANDS).map(usageLine),
  '',
  "From a checkout: `npm run -s intake -- <command>` (-s keeps npm's own banner off stdout) or `npx intake <command>`.",
].join('\n');

const HELP = new Set(['--help', '-h', 'help']);
const VERSION = new Set(['--version', '-V', 'version']);

/**
 * Usage or the version asked for: printed on stdout as it is, exit 0 (`intake --help`, `intake help
 * org list`, `intake org list --help`, and a group's: `intake help org`, `intake org --help`).
 */
class HelpRequest {
  constructor(readonly text: string) {}
}

/** The commands of a group (`org`: `org create`, `org list`, ...), as usage lines; empty for no group. */
function groupUsage(group: string): string[] {
  return Object.keys(COMMANDS)
    .filter((c) => c.startsWith(`${group} `))
    .map(usageLine);
}

function resolve(argv: string[]): { command: Command; rest: string[] } | HelpRequest {
  if (argv.length === 1 && VERSION.has(argv[0]!)) return new HelpRequest(packageVersion());
  if (argv.length && HELP.has(argv[0]!)) {
    const topic = argv.slice(1).join(' ');
    if (!topic) return new HelpRequest(USAGE);
    if (COMMANDS[topic]) return new HelpRequest(`usage: intake ${usageLine(topic).trimStart()}`);
    const group = groupUsage(topic);
    if (group.length) return new HelpRequest(`usage: intake ${topic} <action> [--flags]\n${group.join('\n')}`);
    throw new CliError(`unknown command: ${topic}\n${USAGE}`, 2);
  }
  const two = argv.slice(0, 2).join(' ');
  const name = COMMANDS[two] ? two : COMMANDS[argv[0] ?? ''] ? argv[0]! : undefined;
  if (name === undefined) {
    // `intake org`: the group's commands; `intake org --help`: the same, asked for.
    const group = groupUsage(argv[0] ?? '');
    if (group.length && argv.length === 2 && HELP.has(argv[1]!)) return resolve(['help', argv[0]!]);
    if (argv.length === 1 && group.length) throw new CliError(`intake ${argv[0]}: give an action\n${group.join('\n')}`, 2);
    throw new CliError(argv.length ? `unknown command: ${argv.join(' ')}\n${USAGE}` : USAGE, 2);
  }
  const rest = argv.slice(name.split(' ').length);
  if (rest.some((a) => a === '--help' || a === '-h')) return new HelpRequest(`usage: intake ${usageLine(name).trimStart()}`);
  return { command: COMMANDS[name]!.run, rest };
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
    const resolved = resolve(argv);
    if (resolved instanceof HelpRequest) {
      process.stdout.write(`${resolved.text}\n`);
      return 0;
    }
    const { command, rest } = resolved;
    ctx = new CliContext(loadConfig(env));
    const result = await command(ctx, rest);
    if (!(result instanceof OutputWritten)) process.stdout.write(`${JSON.stringify(result)}\n`);
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

if (isEntryPoint(import.meta.url)) {
  process.exitCode = await runCli(process.argv.slice(2));
}
