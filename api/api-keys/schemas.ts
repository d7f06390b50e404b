/** The schemas of this area live in src/contracts: the CLI presents keys the same way. */
export {
  apiKeySchema,
  apiKeyWithSecretSchema,
  createApiKeyBody,
  type ApiKey,
  type ApiKeyWithSecret,
  type CreateApiKeyBody,
} from '../../src/contracts/api-keys.js';

export { pageQuery, type PageQuery } from '../paging.js';
