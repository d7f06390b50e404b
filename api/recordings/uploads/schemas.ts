import { uploadPhase } from '../../../src/contracts/uploads.js';
import type { JsonSchema, Validated } from '../../validation.js';

export { createUploadBody, uploadStatusSchema } from '../../../src/contracts/uploads.js';

export const createdUploadSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'A direct upload destination: transfer the file to uploadUrl with a tus client',
  required: ['recordingId', 'uploadId', 'uploadUrl', 'timeoutSeconds', 'phase'],
  properties: {
    recordingId: { type: 'string', format: 'uuid' },
    uploadId: { type: 'string', format: 'uuid' },
    uploadUrl: {
      type: 'string',
      format: 'uri',
      description: 'A tus resource for the declared size; a short-lived secret: do not log or persist it',
    },
    timeoutSeconds: { type: 'integer', minimum: 0, description: 'Time left to begin the transfer' },
    phase: uploadPhase,
  },
} as const satisfies JsonSchema;
export type CreatedUpload = Validated<typeof createdUploadSchema>;
