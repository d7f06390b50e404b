import type { S3ClientConfig } from '@aws-sdk/client-s3';
import type { S3Settings } from '../config.js';

/**
 * The AWS SDK client settings of a configured bucket, for the upload store and the media store
 * alike: without keys, the SDK's default credential chain.
 */
export function s3ClientConfig(settings: S3Settings): S3ClientConfig {
  return {
    region: settings.region,
    forcePathStyle: settings.forcePathStyle,
    ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
    ...(settings.accessKeyId && settings.secretAccessKey
      ? { credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey } }
      : {}),
  };
}
