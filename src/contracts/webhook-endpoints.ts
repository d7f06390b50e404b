import type { FromSchema } from 'json-schema-to-ts';
import type { WebhookEndpointRow } from '../db/repositories/webhook-endpoints.js';
import { DOMAIN_EVENT_TYPES } from '../domain/events.js';
import { timestamp, nullableTimestamp, type JsonSchema } from './json-schema.js';

/** The longest endpoint URL accepted (the common browser and proxy limit). */
export const WEBHOOK_URL_MAX_LENGTH = 2048;

const url = {
  type: 'string',
  minLength: 1,
  maxLength: WEBHOOK_URL_MAX_LENGTH,
  description:
    'Where deliveries are POSTed: an absolute `http` or `https` URL without whitespace, credentials (`user:password@`) or fragment (`#`); `https` only when Intake runs with `NODE_ENV=production`',
} as const;

const eventTypes = {
  type: ['array', 'null'],
  minItems: 1,
  uniqueItems: true,
  items: { type: 'string', enum: DOMAIN_EVENT_TYPES },
  description:
    'The event types delivered to the endpoint, each at most once; `null` (or omitted on create): every type, including types added later',
} as const;

const description = { type: 'string', maxLength: 500, description: 'A note for people (what receives these events)' } as const;
const enabled = { type: 'boolean', description: '`false`: nothing is delivered to the endpoint until it is enabled again' } as const;

export const createWebhookEndpointBody = {
  type: 'object',
  additionalProperties: false,
  required: ['url'],
  properties: { url, eventTypes, description, enabled },
} as const satisfies JsonSchema;

export const updateWebhookEndpointBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    url,
    eventTypes,
    description,
    enabled: {
      ...enabled,
      description:
        '`true` enables a disabled endpoint (by its owner or by Intake after 5 days of failures) and clears `disabledReason`; `false` disables it',
    },
  },
} as const satisfies JsonSchema;

export type CreateWebhookEndpointBody = FromSchema<typeof createWebhookEndpointBody>;
/** A change of an endpoint, as the REST body and the CLI flags express it; absent fields keep their value. */
export type WebhookEndpointPatch = FromSchema<typeof updateWebhookEndpointBody>;

export const webhookEndpointSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'A webhook endpoint of the organization: where its events are delivered (never its secret)',
  required: [
    'id',
    'url',
    'description',
    'eventTypes',
    'enabled',
    'disabledReason',
    'disabledAt',
    'previousSecretExpiresAt',
    'createdAt',
    'updatedAt',
  ],
  properties: {
    id: { type: 'string', format: 'uuid' },
    url: { type: 'string' },
    description: { type: 'string' },
    eventTypes: {
      type: ['array', 'null'],
      items: { type: 'string' },
      description: 'The event types delivered; `null`: every type, including types added later',
    },
    enabled: { type: 'boolean' },
    disabledReason: {
      type: ['string', 'null'],
      description: 'Why the endpoint is disabled: by a user, or by Intake after 5 days of failed deliveries; `null` while enabled',
    },
    disabledAt: nullableTimestamp,
    previousSecretExpiresAt: {
      ...nullableTimestamp,
      description: 'After a rotation: until when deliveries are also signed with the previous secret; `null` when none is valid',
    },
    createdAt: timestamp,
    updatedAt: timestamp,
  },
} as const satisfies JsonSchema;
export type WebhookEndpoint = FromSchema<typeof webhookEndpointSchema>;

export const webhookEndpointWithSecretSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'A webhook endpoint with its signing secret: answered only when the endpoint is created and when its secret is rotated',
  required: [...webhookEndpointSchema.required, 'secret'],
  properties: {
    ...webhookEndpointSchema.properties,
    secret: {
      type: 'string',
      pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$',
      description: 'The signing secret (`whsec_` + base64), shown this once: verify `webhook-signature` with it (Standard Webhooks)',
    },
  },
} as const satisfies JsonSchema;
export type WebhookEndpointWithSecret = FromSchema<typeof webhookEndpointWithSecretSchema>;

export const presentWebhookEndpoint = (e: WebhookEndpointRow): WebhookEndpoint => ({
  id: e.id,
  url: e.url,
  description: e.description,
  eventTypes: e.event_types,
  enabled: e.enabled,
  disabledReason: e.disabled_reason,
  disabledAt: e.disabled_at,
  previousSecretExpiresAt: e.previous_secret_expires_at,
  createdAt: e.created_at,
  updatedAt: e.updated_at,
});
