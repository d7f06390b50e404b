/**
 * Request schemas that both the API (which validates with them) and src/ services (which take
 * their types) need live under src/contracts: src/ never imports api/. Each schema is an `as const`
 * literal, so its TypeScript type is derived from it (`FromSchema`) instead of being written twice.
 */
export type JsonSchema = Record<string, unknown>;

/** The scalars every contract uses (schemas are `as const` literals: shared, they keep their literal types). */
export const uuid = { type: 'string', format: 'uuid' } as const;
export const timestamp = { type: 'string', format: 'date-time' } as const;
export const nullableTimestamp = { type: ['string', 'null'], format: 'date-time' } as const;
