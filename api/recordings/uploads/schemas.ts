import type { JsonSchema } from '../../validation.js';

/** Spec "Direct upload": the create request body. */
export const createUploadBody: JsonSchema = {
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
};

const phase = { type: 'string', enum: ['waiting', 'encoding', 'finalizing', 'ready', 'failed', 'cancelled'] };

export const createdUploadSchema: JsonSchema = {
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
};

export const uploadStatusSchema: JsonSchema = {
  type: 'object',
  required: ['recordingId', 'uploadId', 'phase', 'encodeProgress', 'errorCode'],
  properties: {
    recordingId: { type: 'string', format: 'uuid' },
    uploadId: { type: 'string', format: 'uuid' },
    phase,
    encodeProgress: { anyOf: [{ type: 'integer', minimum: 0, maximum: 100 }, { type: 'null' }] },
    errorCode: { anyOf: [{ type: 'string', enum: ['upload_failed', 'upload_expired', 'processing_failed'] }, { type: 'null' }] },
  },
};
