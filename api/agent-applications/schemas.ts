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
import type { JsonSchema, Validated } from '../validation.js';

export { pageQuery, type PageQuery } from '../paging.js';

export const credentialListSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['credentials'],
  properties: { credentials: { type: 'array', items: credentialSchema } },
} as const satisfies JsonSchema;

export const deleteApplicationQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    sessions: {
      type: 'string',
      enum: ['keep', 'delete'],
      default: 'keep',
      description:
        '`keep` (default): the stored conversations stay readable. `delete`: they disappear from every read at once and are deleted with their events, signals and analyses by the retention sweep (metered usage stays)',
    },
  },
} as const satisfies JsonSchema;
export type DeleteApplicationQuery = Validated<typeof deleteApplicationQuery>;
