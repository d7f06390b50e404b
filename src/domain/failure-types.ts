/**
 * Every `type` an ApplicationFailure of this service carries (activities, and workflows that fail an
 * update), in one place. The strings are stored in workflow histories and, for media, as the asset's
 * errorCode: never change one; add a new one instead. Pure (src/domain): workflows, activities and providers import it from here.
 */
export const FailureType = {
  // Fetching an asset URL (src/media/safe-fetch.ts); each is also the asset's errorCode.
  assetUrlBlocked: 'asset_url_blocked',
  assetUrlInvalid: 'asset_url_invalid',
  assetTooManyRedirects: 'asset_too_many_redirects',
  assetUnsupportedContentType: 'asset_unsupported_content_type',
  assetTooLarge: 'asset_too_large',
  assetNotFound: 'asset_not_found',
  assetAccessDenied: 'asset_access_denied',
  assetHttpError: 'asset_http_error',
  assetUnavailable: 'asset_unavailable',
  assetDnsFailed: 'asset_dns_failed',
  assetNetworkError: 'asset_network_error',
  assetEmpty: 'asset_empty',
  // The media ingestion's own (activities/media.ts).
  ingestionNotFound: 'ingestion_not_found',
  ingestionGone: 'ingestion_gone',
  uploadFailed: 'upload_failed',
  processingFailed: 'processing_failed',
  ffmpegUnavailable: 'ffmpeg_unavailable',
  recorderUnavailable: 'recorder_unavailable',
  // Transcription (src/providers/transcriber).
  transcriptionFailed: 'transcription_failed',
  mediaTooLong: 'media_too_long',
  engineUnavailable: 'engine_unavailable',
  // Outside providers over HTTP (src/providers/http.ts): transcriber and recorder.
  providerUnreachable: 'provider_unreachable',
  providerUnauthorized: 'provider_unauthorized',
  providerUnavailable: 'provider_unavailable',
  providerRejected: 'provider_rejected',
  invalidResponse: 'invalid_response',
  // The meeting recorder (src/providers/recorder) and the meeting-join workflow.
  invalidRequest: 'invalid_request',
  botNotFound: 'bot_not_found',
  recorderFailed: 'recorder_failed',
} as const;

export type FailureType = (typeof FailureType)[keyof typeof FailureType];

export const FAILURE_TYPES: readonly FailureType[] = Object.values(FailureType);

/**
 * The asset's errorCode for a media ingestion that failed with this failure type (null: not an
 * ApplicationFailure): the asset's own codes and `upload_failed` as they are, anything else
 * `processing_failed`. Stored histories replay through this: its answers must not change.
 */
export function assetErrorCodeOf(type: string | null | undefined): string {
  return type && (type.startsWith('asset_') || type === FailureType.uploadFailed) ? type : FailureType.processingFailed;
}
