import { DOMAIN_EVENT_TYPES, type DomainEventType } from '../../domain/events.js';
import {
  changeEndpoint,
  createEndpoint,
  endpointPolicy,
  getEndpoint,
  listEndpoints,
  presentWebhookEndpoint,
  removeEndpoint,
  rotateEndpointSecret,
  type NewEndpoint,
  type WebhookEndpointPatch,
} from '../../webhooks/endpoints.js';
import { flags, list, optStr, str, type Flags } from '../args.js';
import { CliError, type CliContext } from '../context.js';
import { requireOrganization } from './tenancy.js';

/** `intake webhook …`: the REST management of webhook endpoints, for operators, through the same service. */

const DESCRIPTION_MAX = 500;

async function keys(ctx: CliContext) {
  const found = await ctx.payloadKeys();
  if (!found?.length) throw new CliError('webhook secrets are sealed under the payload keys: set TEMPORAL_PAYLOAD_KEYS or SIGNING_SECRET');
  return found;
}

/** `--event-types a,b` (each once, known) or `all` (null: every type, including later ones). */
function eventTypes(f: Flags): DomainEventType[] | null | undefined {
  const v = optStr(f, 'event-types');
  if (v === undefined) return undefined;
  if (v === 'all') return null;
  const types = list(f, 'event-types') ?? [];
  const unknown = types.filter((t) => !(DOMAIN_EVENT_TYPES as readonly string[]).includes(t));
  if (types.length === 0 || unknown.length || new Set(types).size !== types.length) {
    throw new CliError(`--event-types must be "all" or distinct types of: ${DOMAIN_EVENT_TYPES.join(', ')}`, 2);
  }
  return types as DomainEventType[];
}

function description(f: Flags): string | undefined {
  const v = f.description;
  if (typeof v !== 'string') return undefined;
  if (v.length > DESCRIPTION_MAX) throw new CliError(`--description must be at most ${DESCRIPTION_MAX} characters`, 2);
  return v;
}

function enabled(f: Flags): boolean | undefined {
  const v = optStr(f, 'enabled');
  if (v === undefined) return undefined;
  if (v !== 'on' && v !== 'off') throw new CliError('--enabled must be on or off', 2);
  return v === 'on';
}

const withSecret = ({ endpoint, secret }: NewEndpoint) => ({ ...presentWebhookEndpoint(endpoint), secret });

export async function webhookCreate(ctx: CliContext, argv: string[]) {
  const f = flags(argv, { org: 'string', url: 'string', 'event-types': 'string', description: 'string', enabled: 'string' });
  const org = await requireOrganization(ctx, str(f, 'org'));
  const input = { url: str(f, 'url'), eventTypes: eventTypes(f), description: description(f), enabled: enabled(f) };
  return withSecret(
    await createEndpoint(await ctx.db(), await keys(ctx), endpointPolicy(ctx.config), { organizationId: org.id, ...input }),
  );
}

export async function webhookList(ctx: CliContext, argv: string[]) {
  const f = flags(argv, { org: 'string' });
  const org = await requireOrganization(ctx, str(f, 'org'));
  // Every endpoint: an organization has a few (WEBHOOK_ENDPOINTS_PER_ORGANIZATION at most).
  const rows = await listEndpoints(await ctx.db(), org.id, { offset: 0, limit: 1000 });
  return { endpoints: rows.map(presentWebhookEndpoint) };
}

export async function webhookShow(ctx: CliContext, argv: string[]) {
  const f = flags(argv, { org: 'string', id: 'string' });
  const org = await requireOrganization(ctx, str(f, 'org'));
  return presentWebhookEndpoint(await getEndpoint(await ctx.db(), org.id, str(f, 'id')));
}

export async function webhookUpdate(ctx: CliContext, argv: string[]) {
  const f = flags(argv, { org: 'string', id: 'string', url: 'string', 'event-types': 'string', description: 'string', enabled: 'string' });
  const org = await requireOrganization(ctx, str(f, 'org'));
  const patch: WebhookEndpointPatch = {
    url: optStr(f, 'url'),
    eventTypes: eventTypes(f),
    description: description(f),
    enabled: enabled(f),
  };
  const defined = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as WebhookEndpointPatch;
  if (Object.keys(defined).length === 0) throw new CliError('nothing to update: give --url, --event-types, --description or --enabled', 2);
  return presentWebhookEndpoint(await changeEndpoint(await ctx.db(), endpointPolicy(ctx.config), org.id, str(f, 'id'), defined));
}

export async function webhookDelete(ctx: CliContext, argv: string[]) {
  const f = flags(argv, { org: 'string', id: 'string' });
  const org = await requireOrganization(ctx, str(f, 'org'));
  const deleted = await removeEndpoint(await ctx.db(), org.id, str(f, 'id'));
  return { id: deleted.id, deleted: true };
}

export async function webhookRotateSecret(ctx: CliContext, argv: string[]) {
  const f = flags(argv, { org: 'string', id: 'string' });
  const org = await requireOrganization(ctx, str(f, 'org'));
  return withSecret(await rotateEndpointSecret(await ctx.db(), await keys(ctx), org.id, str(f, 'id')));
}
