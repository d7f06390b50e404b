import type { JsonSchema, Validated } from '../validation.js';

export const organizationSchema = {
  type: 'object',
  required: ['organizationId', 'name', 'recordingAllowed', 'creditBalance', 'createdAt'],
  properties: {
    organizationId: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    recordingAllowed: { type: 'boolean' },
    creditBalance: { type: 'integer' },
    createdAt: { type: 'string', format: 'date-time' },
  },
} as const satisfies JsonSchema;

export const addCreditsBody = {
  type: 'object',
  additionalProperties: false,
  required: ['amount'],
  properties: {
    amount: { type: 'integer', minimum: 1, maximum: 1_000_000_000 },
    reason: { type: 'string', minLength: 1, maxLength: 200 },
  },
} as const satisfies JsonSchema;

export const balanceSchema = {
  type: 'object',
  required: ['organizationId', 'balance'],
  properties: {
    organizationId: { type: 'string', format: 'uuid' },
    balance: { type: 'integer' },
    resumedSessions: { type: 'integer', description: 'Billing-blocked agent sessions woken to resume their analysis' },
  },
} as const satisfies JsonSchema;

export const userSchema = {
  type: 'object',
  required: ['userId', 'email', 'role', 'status', 'createdAt'],
  properties: {
    userId: { type: 'string', format: 'uuid' },
    email: { type: 'string' },
    firstName: { type: ['string', 'null'] },
    lastName: { type: ['string', 'null'] },
    role: { type: 'string', enum: ['member', 'admin'] },
    status: { type: 'string', enum: ['active', 'disabled'] },
    createdAt: { type: 'string', format: 'date-time' },
  },
} as const satisfies JsonSchema;

export type AddCreditsBody = Validated<typeof addCreditsBody>;
