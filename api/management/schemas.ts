import type { JsonSchema } from '../validation.js';

export const organizationSchema: JsonSchema = {
  type: 'object',
  required: ['organizationId', 'name', 'recordingAllowed', 'creditBalance', 'createdAt'],
  properties: {
    organizationId: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    recordingAllowed: { type: 'boolean' },
    creditBalance: { type: 'integer' },
    createdAt: { type: 'string', format: 'date-time' },
  },
};

export interface AddCreditsBody {
  amount: number;
  reason?: string;
}

export const addCreditsBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['amount'],
  properties: {
    amount: { type: 'integer', minimum: 1, maximum: 1_000_000_000 },
    reason: { type: 'string', minLength: 1, maxLength: 200 },
  },
};

export const balanceSchema: JsonSchema = {
  type: 'object',
  required: ['organizationId', 'balance'],
  properties: {
    organizationId: { type: 'string', format: 'uuid' },
    balance: { type: 'integer' },
    resumedSessions: { type: 'integer', description: 'Billing-blocked agent sessions woken to resume their analysis' },
  },
};

export const userSchema: JsonSchema = {
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
};
