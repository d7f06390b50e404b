/**
 * Request schemas that both the API (which validates with them) and src/ services (which take
 * their types) need live under src/contracts: src/ never imports api/. Each schema is an `as const`
 * literal, so its TypeScript type is derived from it (`FromSchema`) instead of being written twice.
 */
export type JsonSchema = Record<string, unknown>;
