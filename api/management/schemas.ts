import type { CreditTransactionRow, OrganizationRow } from '../../src/db/repositories/organizations.js';
import type { UserRow } from '../../src/db/repositories/users.js';
import type { Principal } from '../../src/auth/principal.js';
import { SCOPES } from '../../src/auth/scopes.js';
import type { JsonSchema, Validated } from '../validation.js';

export const organizationSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'The organization of the calling credential, and what that credential may do in it',
  required: ['organizationId', 'name', 'recordingAllowed', 'creditBalance', 'createdAt', 'caller'],
  properties: {
    organizationId: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    recordingAllowed: { type: 'boolean' },
    creditBalance: { type: 'integer' },
    createdAt: { type: 'string', format: 'date-time' },
    caller: {
      type: 'object',
      additionalProperties: false,
      description:
        "The calling credential: an API key with the scopes it was given, or a user with their role's scopes (members every data scope; admins also `admin` and `webhooks:manage`). The console shows a member no admin page",
      required: ['kind', 'role', 'scopes'],
      properties: {
        kind: { type: 'string', enum: ['apiKey', 'user'] },
        role: { type: ['string', 'null'], enum: ['member', 'admin', null], description: "A user's role; null for an API key" },
        scopes: { type: 'array', items: { type: 'string', enum: [...SCOPES] } },
      },
    },
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
  additionalProperties: false,
  description: 'An organization credit balance after a top-up',
  required: ['organizationId', 'balance', 'resumedSessions'],
  properties: {
    organizationId: { type: 'string', format: 'uuid' },
    balance: { type: 'integer' },
    resumedSessions: { type: 'integer', description: 'Billing-blocked agent sessions woken to resume their analysis' },
  },
} as const satisfies JsonSchema;

export const userSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'A user of the organization',
  required: ['userId', 'email', 'firstName', 'lastName', 'role', 'status', 'createdAt'],
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
export type Organization = Validated<typeof organizationSchema>;
export type Balance = Validated<typeof balanceSchema>;
export type User = Validated<typeof userSchema>;

export const presentOrganization = (org: OrganizationRow, caller: Principal): Organization => ({
  organizationId: org.id,
  name: org.name,
  recordingAllowed: org.recording_allowed,
  creditBalance: org.credit_balance,
  createdAt: org.created_at,
  caller: { kind: caller.kind, role: caller.kind === 'user' ? caller.role : null, scopes: [...caller.scopes] },
});

export const presentUser = (user: UserRow): User => ({
  userId: user.id,
  email: user.email,
  firstName: user.first_name,
  lastName: user.last_name,
  role: user.role,
  status: user.status,
  createdAt: user.created_at,
});

export const creditTransactionSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'A line of the credit ledger: a top-up (positive) or a spend (negative), with the balance after it',
  required: ['transactionId', 'amount', 'reason', 'balanceAfter', 'createdAt'],
  properties: {
    transactionId: { type: 'integer' },
    amount: { type: 'integer' },
    reason: { type: 'string' },
    balanceAfter: { type: 'integer' },
    createdAt: { type: 'string', format: 'date-time' },
  },
} as const satisfies JsonSchema;
export type CreditTransaction = Validated<typeof creditTransactionSchema>;

export const presentCreditTransaction = (t: CreditTransactionRow): CreditTransaction => ({
  transactionId: t.id,
  amount: t.amount,
  reason: t.reason,
  balanceAfter: t.balance_after,
  createdAt: t.created_at,
});
