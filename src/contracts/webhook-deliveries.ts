import type { FromSchema } from 'json-schema-to-ts';
import type { AttemptRow, DeliveryRow } from '../db/repositories/webhook-deliveries.js';
import type { JsonSchema } from './json-schema.js';

/**
 * Webhook deliveries as the REST API (api/webhooks/deliveries.ts) and the CLI
 * (`intake webhook deliveries`) show them. `id` is the delivery's `webhook-id` header.
 */
const dateTime = { type: 'string', format: 'date-time' } as const;
const nullableDateTime = { type: ['string', 'null'], format: 'date-time' } as const;

const deliveryProperties = {
  id: { type: 'string', pattern: '^msg_' },
  endpointId: { type: 'string', format: 'uuid' },
  eventType: { type: 'string' },
  status: { type: 'string', enum: ['pending', 'succeeded', 'failed'] },
  attempts: { type: 'integer', minimum: 0 },
  lastResponseStatus: { type: ['integer', 'null'] },
  lastError: { type: ['string', 'null'] },
  lastAttemptAt: nullableDateTime,
  nextAttemptAt: nullableDateTime,
  createdAt: dateTime,
} as const;

export const deliverySchema = {
  type: 'object',
  additionalProperties: false,
  required: [
    'id',
    'endpointId',
    'eventType',
    'status',
    'attempts',
    'lastResponseStatus',
    'lastError',
    'lastAttemptAt',
    'nextAttemptAt',
    'createdAt',
  ],
  properties: deliveryProperties,
} as const satisfies JsonSchema;
export type Delivery = FromSchema<typeof deliverySchema>;

export const attemptSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['attemptedAt', 'responseStatus', 'responseExcerpt', 'error', 'durationMs'],
  properties: {
    attemptedAt: dateTime,
    responseStatus: { type: ['integer', 'null'] },
    /** At most 1 KiB of what the receiver answered. */
    responseExcerpt: { type: ['string', 'null'] },
    error: { type: ['string', 'null'] },
    durationMs: { type: 'integer', minimum: 0 },
  },
} as const satisfies JsonSchema;
export type DeliveryAttempt = FromSchema<typeof attemptSchema>;

export const deliveryDetailSchema = {
  type: 'object',
  additionalProperties: false,
  required: [...deliverySchema.required, 'body', 'attemptLog'],
  properties: {
    ...deliveryProperties,
    /** The JSON body every attempt sends (null until the first attempt fixes it). */
    body: { type: ['string', 'null'] },
    attemptLog: { type: 'array', items: attemptSchema },
  },
} as const satisfies JsonSchema;
export type DeliveryDetail = FromSchema<typeof deliveryDetailSchema>;

export function presentDelivery(row: DeliveryRow): Delivery {
  return {
    id: row.id,
    endpointId: row.endpoint_id,
    eventType: row.event_type,
    status: row.status,
    attempts: row.attempts,
    lastResponseStatus: row.last_response_status,
    lastError: row.last_error,
    lastAttemptAt: row.last_attempt_at,
    nextAttemptAt: row.status === 'pending' ? row.next_attempt_at : null,
    createdAt: row.created_at,
  };
}

export function presentAttempt(row: AttemptRow): DeliveryAttempt {
  return {
    attemptedAt: row.attempted_at,
    responseStatus: row.response_status,
    responseExcerpt: row.response_excerpt,
    error: row.error,
    durationMs: row.duration_ms,
  };
}

export function presentDeliveryDetail(row: DeliveryRow, attempts: readonly AttemptRow[]): DeliveryDetail {
  return { ...presentDelivery(row), body: row.body, attemptLog: attempts.map(presentAttempt) };
}
