import type { CommonQueryMethods, DatabasePool } from 'slonik';
import type { Config } from '../config.js';
import {
  countWebhookEndpoints,
  deleteWebhookEndpoint,
  findWebhookEndpoint,
  insertWebhookEndpoint,
  listWebhookEndpoints,
  lockOrganizationWebhookEndpoints,
  lockWebhookEndpoint,
  replaceWebhookEndpointSecret,
  updateWebhookEndpoint,
  type WebhookEndpointRow,
} from '../db/repositories/webhook-endpoints.js';
import { AppError, NotFoundError, ValidationError, type FieldError } from '../errors.js';
import type { PayloadKey } from '../keys.js';
import type { CreateWebhookEndpointBody, WebhookEndpointPatch } from '../contracts/webhook-endpoints.js';
import { notifyEndpoint } from '../db/repositories/webhook-deliveries.js';
import { sealSecret } from './secret-box.js';
import { generateWebhookSecret } from './signing.js';

export type { CreateWebhookEndpointBody, WebhookEndpointPatch, WebhookEndpointRow };
/** Presented as the API's response schema says (src/contracts/webhook-endpoints.ts). */
export { presentWebhookEndpoint } from '../contracts/webhook-endpoints.js';

/** Endpoints an organization may have: enough for every receiver it runs, few enough that one event's fan-out stays small. */
export const WEBHOOK_ENDPOINTS_PER_ORGANIZATION = 20;
/** How long a rotated-out secret keeps signing (a second signature), so that receivers can switch without losing a delivery. */
export const PREVIOUS_SECRET_VALID_SECONDS = 24 * 60 * 60;
/** `disabledReason` of an endpoint its owner disabled. */
export const DISABLED_BY_USER = 'disabled by a user';

/** Where the endpoint's policy differs by deployment. */
export interface EndpointPolicy {
  /** `NODE_ENV=production`: receivers must be `https`. */
  requireHttps: boolean;
}

export function endpointPolicy(config: Pick<Config, 'env'>): EndpointPolicy {
  return { requireHttps: config.env === 'production' };
}

/**
 * The keys secrets are sealed under: the payload keys (TEMPORAL_PAYLOAD_KEYS, else the key derived
 * from SIGNING_SECRET), which every process of a deployment shares, so the delivery worker opens
 * what the API and the CLI sealed. The API does not start without SIGNING_SECRET, so it always has one.
 */
export function webhookSecretKeys(config: Pick<Config, 'temporal'>): PayloadKey[] {
  const keys = config.temporal.payloadKeys;
  if (!keys?.length) throw new Error('webhook secrets are sealed under the payload keys: set TEMPORAL_PAYLOAD_KEYS or SIGNING_SECRET');
  return keys;
}

/**
 * The problems of an endpoint URL (`path` names the field), empty when it is acceptable. Syntax and
 * scheme only: whether its address may be reached is decided when a delivery connects (SSRF policy).
 */
export function endpointUrlProblems(url: string, policy: EndpointPolicy, path = 'body.url'): FieldError[] {
  const problem = (message: string): FieldError[] => [{ path, message }];
  // The parser would drop or encode these silently: the endpoint would not be the URL its owner wrote.
  if (/\s/.test(url)) return problem('must not contain whitespace (percent-encode it)');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return problem('must be an absolute URL (https://host/path)');
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return problem('must be an http or https URL');
  // The WHATWG parser also takes `https:host` and `https:\\host`; an endpoint is written out in full.
  if (!/^https?:\/\//i.test(url)) return problem('must be an absolute URL (https://host/path)');
  if (policy.requireHttps && parsed.protocol !== 'https:') return problem('must be an https URL (this deployment delivers only over TLS)');
  if (parsed.username || parsed.password || /^[a-z]+:\/\/[^/?#]*@/i.test(url)) {
    return problem('must not contain credentials (user:password@); authenticate deliveries by their signature');
  }
  if (url.includes('#')) return problem('must not have a fragment (#…): it is never sent to the server');
  return [];
}

function checkUrl(url: string, policy: EndpointPolicy): void {
  const problems = endpointUrlProblems(url, policy);
  if (problems.length) throw new ValidationError(problems);
}

export interface NewEndpoint {
  endpoint: WebhookEndpointRow;
  /** The plaintext `whsec_` secret: shown once, stored only sealed. */
  secret: string;
}

/** Creates an endpoint with a new secret; at most WEBHOOK_ENDPOINTS_PER_ORGANIZATION per organization (409 `webhook_endpoint_limit_reached`). */
export async function createEndpoint(
  db: CommonQueryMethods,
  keys: readonly PayloadKey[],
  policy: EndpointPolicy,
  input: { organizationId: string } & CreateWebhookEndpointBody,
): Promise<NewEndpoint> {
  checkUrl(input.url, policy);
  const secret = generateWebhookSecret();
  const secretSealed = sealSecret(keys, secret);
  const endpoint = await db.transaction(async (tx) => {
    await lockOrganizationWebhookEndpoints(tx, input.organizationId);
    if ((await countWebhookEndpoints(tx, input.organizationId)) >= WEBHOOK_ENDPOINTS_PER_ORGANIZATION) {
      throw new AppError('webhook_endpoint_limit_reached', {
        message: `The organization has ${WEBHOOK_ENDPOINTS_PER_ORGANIZATION} webhook endpoints, as many as it may; delete one first.`,
        details: { limit: WEBHOOK_ENDPOINTS_PER_ORGANIZATION },
      });
    }
    return insertWebhookEndpoint(tx, {
      organizationId: input.organizationId,
      url: input.url,
      description: input.description ?? '',
      eventTypes: input.eventTypes ?? null,
      disabledReason: input.enabled === false ? DISABLED_BY_USER : null,
      secretSealed,
    });
  });
  return { endpoint, secret };
}

export async function listEndpoints(
  pool: DatabasePool,
  organizationId: string,
  page: { offset: number; limit: number },
): Promise<readonly WebhookEndpointRow[]> {
  return listWebhookEndpoints(pool, organizationId, page);
}

/** The organization's endpoint; another organization's (or an unknown id) is 404. */
export async function getEndpoint(pool: DatabasePool, organizationId: string, id: string): Promise<WebhookEndpointRow> {
  const endpoint = await findWebhookEndpoint(pool, organizationId, id);
  if (!endpoint) throw new NotFoundError('Webhook endpoint');
  return endpoint;
}

/**
 * Applies a patch under the row's lock. `enabled: true` on a disabled endpoint clears why and when it
 * was disabled and its run of failures; `enabled: false` on an enabled one records DISABLED_BY_USER
 * (an endpoint already disabled keeps its reason). A new URL starts with no run of failures.
 */
export async function changeEndpoint(
  pool: DatabasePool,
  policy: EndpointPolicy,
  organizationId: string,
  id: string,
  patch: WebhookEndpointPatch,
): Promise<WebhookEndpointRow> {
  if (patch.url !== undefined) checkUrl(patch.url, policy);
  return pool.transaction(async (tx) => {
    const current = await lockWebhookEndpoint(tx, organizationId, id);
    if (!current) throw new NotFoundError('Webhook endpoint');
    const transition =
      patch.enabled === true && !current.enabled
        ? ({ to: 'enable' } as const)
        : patch.enabled === false && current.enabled
          ? ({ to: 'disable', disabledReason: DISABLED_BY_USER } as const)
          : null;
    const updated = await updateWebhookEndpoint(tx, current.id, {
      url: patch.url ?? current.url,
      description: patch.description ?? current.description,
      eventTypes: patch.eventTypes === undefined ? current.event_types : patch.eventTypes,
      transition,
      resetFailures: patch.url !== undefined && patch.url !== current.url,
    });
    // Deliveries left pending while it was disabled go now, not at the next sweep.
    if (transition?.to === 'enable') await notifyEndpoint(tx, current.id);
    return updated;
  });
}

/** Deletes the endpoint with its deliveries; a second delete is 404 (nothing is left to find). */
export async function removeEndpoint(pool: DatabasePool, organizationId: string, id: string): Promise<WebhookEndpointRow> {
  const deleted = await deleteWebhookEndpoint(pool, organizationId, id);
  if (!deleted) throw new NotFoundError('Webhook endpoint');
  return deleted;
}

/**
 * A new secret; the one it replaces keeps signing for PREVIOUS_SECRET_VALID_SECONDS (deliveries carry
 * both signatures). A second rotation within that time drops the older previous secret: only the
 * secret just replaced stays valid beside the new one.
 */
export async function rotateEndpointSecret(
  db: CommonQueryMethods,
  keys: readonly PayloadKey[],
  organizationId: string,
  id: string,
): Promise<NewEndpoint> {
  const secret = generateWebhookSecret();
  const endpoint = await replaceWebhookEndpointSecret(db, organizationId, id, {
    secretSealed: sealSecret(keys, secret),
    previousValidSeconds: PREVIOUS_SECRET_VALID_SECONDS,
  });
  if (!endpoint) throw new NotFoundError('Webhook endpoint');
  return { endpoint, secret };
}
