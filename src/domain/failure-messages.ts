import { FailureType } from './failure-types.js';

/**
 * A human message for every failure type (src/domain/failure-types.ts): what a retrying step's
 * `retry.message` says beside its errorCode. The failure's own message is never shown (it can name
 * internal hosts, addresses or queries); this table is the only text that reaches a client. The
 * Record type makes a new failure type without a message a compile error.
 */
export const FAILURE_MESSAGES: Readonly<Record<FailureType, string>> = {
  [FailureType.assetUrlBlocked]: 'The media URL resolves to an address that is not public.',
  [FailureType.assetUrlInvalid]: 'The media URL is not a valid HTTP or HTTPS URL.',
  [FailureType.assetTooManyRedirects]: 'The media URL redirected more than 5 times.',
  [FailureType.assetUnsupportedContentType]: 'The media URL answered with a content type that is not audio or video.',
  [FailureType.assetTooLarge]: 'The media at the URL is larger than 5 GiB.',
  [FailureType.assetNotFound]: 'The media URL answered 404 or 410: nothing is there.',
  [FailureType.assetAccessDenied]: 'The media URL answered 401 or 403: it needs a credential.',
  [FailureType.assetHttpError]: 'The media URL answered with an HTTP error.',
  [FailureType.assetUnavailable]: 'The media server is unavailable or overloaded.',
  [FailureType.assetDnsFailed]: "The media URL's host name could not be resolved.",
  [FailureType.assetNetworkError]: 'The connection to the media server failed or was interrupted.',
  [FailureType.assetEmpty]: 'The media server answered without any media bytes.',
  [FailureType.ingestionNotFound]: 'The media ingestion is not stored yet.',
  [FailureType.ingestionGone]: 'The media ingestion no longer exists.',
  [FailureType.uploadFailed]: 'The uploaded media is missing or incomplete.',
  [FailureType.processingFailed]: 'The media could not be decoded or encoded.',
  [FailureType.ffmpegUnavailable]: 'No media encoder is available on the worker right now.',
  [FailureType.recorderUnavailable]: 'The meeting recorder could not be reached for the recording.',
  [FailureType.transcriptionFailed]: 'The transcription engine could not transcribe the media.',
  [FailureType.mediaTooLong]: 'The media is longer than the transcription engine accepts.',
  [FailureType.engineUnavailable]: 'The transcription engine is unavailable.',
  [FailureType.providerUnreachable]: 'The provider could not be reached.',
  [FailureType.providerUnauthorized]: "The provider refused the service's credential.",
  [FailureType.providerUnavailable]: 'The provider is unavailable or overloaded.',
  [FailureType.providerRejected]: 'The provider rejected the request.',
  [FailureType.invalidResponse]: 'The provider answered with something that could not be read.',
  [FailureType.invalidRequest]: 'The request to the provider was invalid.',
  [FailureType.botNotFound]: 'The recorder does not know the bot.',
  [FailureType.recorderFailed]: 'The recorder could not create the bot.',
};

/** Any failure that is not one of the catalogued types (a bug, an internal error). */
export const UNKNOWN_FAILURE_MESSAGE = 'An internal error occurred; it is being retried.';

export function isFailureType(code: string): code is FailureType {
  return Object.hasOwn(FAILURE_MESSAGES, code);
}

/**
 * The fixed shapes of the SSRF-safe fetcher's transient reasons (`HTTP 503`, `DNS: ENOTFOUND`,
 * `network: ECONNRESET`): a status or an error code about the client's own URL, nothing internal.
 * Any other text is dropped.
 */
const SAFE_DETAIL = /^(HTTP [1-5][0-9]{2}|DNS: [A-Z_]{2,32}|network: [A-Z_]{2,32})$/;

/** The message shown for a failure code: the catalogue's (or the generic one), with a detail of a known safe shape. */
export function failureMessage(code: string, detail?: string | null): string {
  const message = isFailureType(code) ? FAILURE_MESSAGES[code] : UNKNOWN_FAILURE_MESSAGE;
  return detail && SAFE_DETAIL.test(detail) ? `${message.replace(/\.$/, '')} (${detail}).` : message;
}
