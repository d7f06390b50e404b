/** The schemas of this area live in src/contracts: the CLI presents endpoints the same way. */
export {
  createWebhookEndpointBody,
  updateWebhookEndpointBody,
  webhookEndpointSchema,
  webhookEndpointWithSecretSchema,
  type CreateWebhookEndpointBody,
  type WebhookEndpointPatch,
  type WebhookEndpoint,
  type WebhookEndpointWithSecret,
} from '../../src/contracts/webhook-endpoints.js';

export { pageQuery, type PageQuery } from '../paging.js';
