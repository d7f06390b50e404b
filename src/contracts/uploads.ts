import type { FromSchema } from 'json-schema-to-ts';
import type { JsonSchema } from './json-schema.js';
import { retrySchema } from './retry.js';

/** Spec "Direct upload": the create request body. */
export const createUploadBody = {
  type: 'object',
  additionalProperties: false,
  required: ['fileName', 'fileSize'],
  properties: {
    fileName: { type: 'string', minLength: 1, maxLength: 1024, pattern: '\\S', description: 'Non-blank' },
    fileSize: { type: 'integer', minimum: 1, maximum: 9_007_199_254_740_991, description: 'Bytes' },
    folderId: { type: 'string', format: 'uuid', description: 'A folder visible to the caller' },
    batchId: { type: 'string', format: 'uuid', description: 'A batch of the calling user (user tokens only)' },
    inMobileApp: { type: 'boolean', default: false, description: "Reserved for the service's mobile clients" },
  },
} as const satisfies JsonSchema;

/** `inMobileApp` is always present after validation (its default). */
export type CreateUploadBody = FromSchema<typeof createUploadBody>;

export const uploadPhase = { type: 'string', enum: ['waiting', 'encoding', 'finalizing', 'ready', 'failed', 'cancelled'] } as const;

/** The spec's upload status object. */
export const uploadStatusSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'The status of a direct upload',
  required: ['recordingId', 'uploadId', 'phase', 'encodeProgress', 'errorCode'],
  properties: {
    recordingId: { type: 'string', format: 'uuid' },
    uploadId: { type: 'string', format: 'uuid' },
    phase: uploadPhase,
    encodeProgress: { anyOf: [{ type: 'integer', minimum: 0, maximum: 100 }, { type: 'null' }] },
    errorCode: {
      type: ['string', 'null'],
      description: 'When failed: upload_failed, upload_expired, processing_failed, processing_interrupted, or an asset_* code of the media',
    },
    retry: retrySchema,
  },
} as const satisfies JsonSchema;
export type UploadStatus = FromSchema<typeof uploadStatusSchema>;
