/** The schemas of this area live in src/contracts: the CLI presents applications the same way. */
export {
  AGENT_KEY_PATTERN,
  ENVIRONMENT_PATTERN,
  createApplicationBody,
  updateApplicationBody,
  applicationSchema,
  credentialSchema,
  newCredentialSchema,
  type CreateApplicationBody,
  type SettingsPatch as UpdateApplicationBody,
  type Application,
  type Credential,
  type NewCredential,
} from '../../src/contracts/agent-applications.js';

import { credentialSchema } from '../../src/contracts/agent-applications.js';
import type { JsonSchema } from '../validation.js';

export { pageQuery, type PageQuery } from '../paging.js';

export const credentialListSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['credentials'],
  properties: { credentials: { type: 'array', items: credentialSchema } },
} as const satisfies JsonSchema;
