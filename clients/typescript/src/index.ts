export {
  createIntakeClient,
  credentialHeaders,
  IntakeError,
  unwrap,
  type IntakeClient,
  type IntakeClientOptions,
  type Unwrapped,
} from './client.js';
export { paginate, paginateByPage, PagingError, SYNC_FROM_THE_BEGINNING, syncQuery, type CursorPage } from './paging.js';
export type { components, operations, paths } from './schema.js';
