import type { JsonSchema } from '../../validation.js';

export { createUploadBody } from '../../../src/contracts/uploads.js';

const phase = { type: 'string', enum: ['waiting', 'encoding', 'finalizing', 'ready', 'failed', 'cancelled'] } as const;

export const createdUploadSchema = {
  type: 'object',
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
    phase,
  },
} as const satisfies JsonSchema;

export const uploadStatusSchema = {
  type: 'object',
  required: ['recordingId', 'uploadId', 'phase', 'encodeProgress', 'errorCode'],
  properties: {
    recordingId: { type: 'string', format: 'uuid' },
    uploadId: { type: 'string', format: 'uuid' },
    phase,
    encodeProgress: { anyOf: [{ type: 'integer', minimum: 0, maximum: 100 }, { type: 'null' }] },
    errorCode: { anyOf: [{ type: 'string', enum: ['upload_failed', 'upload_expired', 'processing_failed'] }, { type: 'null' }] },
  },
} as const satisfies JsonSchema;
