import { signalSchema } from '../../src/contracts/signals.js';
import { createdRangeProperties } from '../created-range.js';
import { pageProperties } from '../paging.js';
import { syncPageSchema, syncQueryProperties } from '../sync.js';
import type { JsonSchema, Validated } from '../validation.js';

export { presentSignal, signalSchema, type Signal } from '../../src/contracts/signals.js';

export const signalsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    source: { type: 'string', enum: ['explicit_feedback', 'qualitative_inference'] },
    rating: { type: 'string', enum: ['positive', 'negative'] },
    sessionId: { type: 'string', format: 'uuid' },
    applicationId: { type: 'string', format: 'uuid' },
    ...createdRangeProperties('signals found'),
    ...pageProperties,
    ...syncQueryProperties,
  },
} as const satisfies JsonSchema;

const nullableString = { anyOf: [{ type: 'string' }, { type: 'null' }] } as const;

export const signalsPage = syncPageSchema('signals', signalSchema);

export const usageQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    unit: { type: 'string', enum: ['agent_response_processed'], default: 'agent_response_processed' },
    from: { type: 'string', format: 'date-time', description: 'Inclusive; default: the start of the current UTC month' },
    to: { type: 'string', format: 'date-time', description: 'Exclusive; default: now' },
    applicationId: { type: 'string', format: 'uuid' },
    sessionId: {
      type: 'string',
      format: 'uuid',
      description: "One session's units (404 when the caller cannot read it); give `from` as far back as the session goes",
    },
  },
} as const satisfies JsonSchema;

export const usageSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'Metered units in [from, to), in total and per UTC day',
  required: ['unit', 'from', 'to', 'applicationId', 'sessionId', 'quantity', 'days'],
  properties: {
    unit: { type: 'string' },
    from: { type: 'string', format: 'date-time' },
    to: { type: 'string', format: 'date-time' },
    applicationId: nullableString,
    sessionId: nullableString,
    quantity: { type: 'integer' },
    days: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['date', 'quantity'],
        properties: { date: { type: 'string', format: 'date' }, quantity: { type: 'integer' } },
      },
    },
  },
} as const satisfies JsonSchema;

export type SignalsQuery = Validated<typeof signalsQuery>;
export type UsageQuery = Validated<typeof usageQuery>;
export type Usage = Validated<typeof usageSchema>;
