/**
 * Every error the HTTP API answers with on purpose, in one place: its status, its default message
 * and what it means (for the OpenAPI document and docs/errors.md). A throw site names a key
 * (`new AppError('upload_closed', { message })`); the status always comes from here. A site
 * overrides the message only where the message carries information (which field, which limit).
 *
 * The key is the wire `errorCode`, except for an entry with `code`: the same errorCode answered with
 * another status by an area whose contract says so (agent ingest's 400 `payload_too_large`).
 */
interface ErrorEntry {
  status: number;
  message: string;
  description: string;
  /** The wire errorCode when it is not the key. */
  code?: string;
  /** Headers every response with this error carries (a site may add or override). */
  headers?: Readonly<Record<string, string>>;
}

const BEARER_CHALLENGE = { 'WWW-Authenticate': 'Bearer realm="intake"' } as const;

export const ERROR_CATALOGUE = {
  // 400
  validation_failed: {
    status: 400,
    message: 'The request is invalid.',
    description: 'The body, query or path breaks the schema or a rule; `errors: [{path, message}]` lists each problem.',
  },
  otlp_invalid_payload: {
    status: 400,
    message: 'The body is not an OTLP export request.',
    description: 'OTLP ingest: the body does not decode as the protobuf or JSON export request its Content-Type names (or as gzip).',
  },
  malformed_json: { status: 400, message: 'The request body is not valid JSON.', description: 'The body does not parse as JSON.' },
  request_aborted: {
    status: 400,
    message: 'The request was aborted by the client.',
    description: 'The client closed the request before its body arrived.',
  },
  bad_request: { status: 400, message: 'Bad request.', description: 'The request could not be read (a body parser refused it).' },
  origin_required: {
    status: 400,
    message: 'A user request must send an Origin header: it scopes the upload destination for CORS.',
    description: 'A user creating a direct upload sent no Origin header.',
  },
  origin_invalid: {
    status: 400,
    message: 'The Origin header must be a scheme, host and optional port, such as https://app.example.com.',
    description: 'The Origin header of a direct upload is not an origin.',
  },
  idempotency_key_invalid: {
    status: 400,
    message: 'The Idempotency-Key header must be 1 to 255 printable ASCII characters.',
    description: 'The `Idempotency-Key` header is empty, longer than 255 characters or not printable ASCII.',
  },
  ingest_payload_too_large: {
    status: 400,
    code: 'payload_too_large',
    message: 'The request body is too large.',
    description: 'Agent chat ingest: the body exceeds 2 MiB (a 400 by the ingest contract).',
  },
  invalid_cursor: {
    status: 400,
    message: 'The cursor is not one this list returned: send nextCursor unchanged, to the list that returned it.',
    description:
      'Incremental sync: `cursor` is not a `nextCursor` of this list (altered, truncated, or from another list). Start again with `updatedSince`.',
  },
  // 401
  unauthenticated: {
    status: 401,
    message: 'Authentication required.',
    description: 'No credential was sent.',
    headers: BEARER_CHALLENGE,
  },
  invalid_credentials: {
    status: 401,
    message: 'The credential is not valid.',
    description: 'The credential is unknown, malformed or belongs elsewhere.',
    headers: BEARER_CHALLENGE,
  },
  token_expired: {
    status: 401,
    message: 'The token has expired.',
    description: 'The access token has expired.',
    headers: BEARER_CHALLENGE,
  },
  credential_revoked: {
    status: 401,
    message: 'The credential has been revoked.',
    description: 'The API key, token or ingest secret has been revoked.',
    headers: BEARER_CHALLENGE,
  },
  recording_not_allowed: {
    status: 401,
    message: 'Recording is not enabled for this organization.',
    description: 'The organization may not record (uploads, meeting joins).',
  },
  // 403
  principal_not_allowed: {
    status: 403,
    message: 'This operation requires another kind of credential.',
    description: 'The route takes another kind of credential (an API key where a user token is needed, or the reverse).',
  },
  insufficient_scope: {
    status: 403,
    message: 'The credential lacks the scope this operation needs.',
    description: 'The credential lacks the scope the route (or MCP tool) needs; `requiredScope` names it.',
  },
  scope_not_held: {
    status: 403,
    message: 'An API key may be given only scopes the credential that creates it holds.',
    description: 'Creating an API key with a scope the caller does not hold; `missingScopes` names them.',
  },
  playback_url_invalid: {
    status: 403,
    message: 'The playback URL is not valid.',
    description: 'The signature of a playback URL does not match.',
  },
  playback_url_expired: {
    status: 403,
    message: 'The playback URL has expired: read the recording again for a fresh one.',
    description: 'The playback URL is past its `expires`.',
  },
  application_disabled: {
    status: 403,
    message: 'The application is disabled; it accepts no uploads until it is enabled again.',
    description: 'Agent chat ingest for a disabled application.',
  },
  batch_user_scoped: {
    status: 403,
    message:
      "Batches are user-scoped: an organization API key cannot attach an upload to a batch; send the request with the batch owner's user token.",
    description: 'An organization API key named a batch (batches belong to users).',
  },
  // 404
  not_found: {
    status: 404,
    message: 'Resource not found.',
    description:
      'The resource does not exist or belongs to another organization; `resource` names it (and the id, when a body names several).',
  },
  route_not_found: { status: 404, message: 'No route for this method and path.', description: 'No route matches the path.' },
  agent_chats_not_enabled: {
    status: 404,
    message: 'Agent chats are not enabled for this workspace.',
    description: 'The organization has agent chats turned off.',
  },
  // 405
  method_not_allowed: {
    status: 405,
    message: 'The method is not allowed on this resource.',
    description: 'The path exists, the method does not (`Allow` lists the methods).',
  },
  // 409
  duplicate_external_id: {
    status: 409,
    message: 'A record with this external_id already exists in this source.',
    description: 'A feedback record with the same `external_id` exists in the source; `id` is the existing record.',
  },
  webhook_endpoint_disabled: {
    status: 409,
    message: 'The webhook endpoint is disabled: enable it first.',
    description:
      'A redelivery or test event for a disabled endpoint (disabled by its owner, or by Intake after 5 days of failed attempts: `disabledReason` says which).',
  },
  agent_key_taken: {
    status: 409,
    message: 'An application with this agentKey already exists in this organization.',
    description: 'Another agent application of the organization has the `agentKey`.',
  },
  webhook_endpoint_limit_reached: {
    status: 409,
    message: 'The organization has as many webhook endpoints as it may; delete one first.',
    description: 'Creating a webhook endpoint past the per-organization limit (`limit`).',
  },
  metadata_field_exists: {
    status: 409,
    message: 'A metadata field with this name already exists in the recordings source.',
    description: 'A metadata field with the same name exists.',
  },
  media_ingestion_active: {
    status: 409,
    message: 'The recording already has an active media ingestion; wait for it to end or cancel it.',
    description: 'The recording has an active media ingestion (`uploadId` names an active upload).',
  },
  asset_already_completed: {
    status: 409,
    message: 'The recording already has its media; create a new recording for other media.',
    description: 'The recording has its media already.',
  },
  upload_processing_begun: {
    status: 409,
    message: 'Processing has begun: the upload can no longer be cancelled; keep polling its status.',
    description: 'Cancelling an upload whose processing has begun.',
  },
  upload_failed: { status: 409, message: 'The upload has already failed.', description: 'Cancelling an upload that has failed.' },
  upload_complete: {
    status: 409,
    message: 'Every byte of this upload is stored already.',
    description: 'A tus PATCH to an upload that has all its bytes.',
  },
  meeting_url_not_supported: {
    status: 409,
    message: 'The recorder cannot join this URL: Zoom, Google Meet, Microsoft Teams and Webex meeting links are supported.',
    description: 'The meeting URL is not one the recorder can join.',
  },
  event_sequence_changed: {
    status: 409,
    message: 'The event was sent again with another sequence.',
    description: 'Agent ingest: an event id came back with another sequence; `conflicts` lists each.',
  },
  event_type_changed: {
    status: 409,
    message: 'The event was sent again with another type.',
    description: 'Agent ingest: an event id came back with another type.',
  },
  final_event_reverted: {
    status: 409,
    message: 'A final assistant message cannot become non-final.',
    description: 'Agent ingest: a revision made a final assistant message non-final.',
  },
  event_changed_without_revision: {
    status: 409,
    message: 'The event changed without a higher revision.',
    description: 'Agent ingest: an event changed without a higher `revision`.',
  },
  sequence_occupied: {
    status: 409,
    message: 'The sequence already holds another event.',
    description: 'Agent ingest: the sequence holds another event.',
  },
  session_closed: {
    status: 409,
    message: 'The session is closed; it accepts revisions and feedback only.',
    description: 'Agent ingest: a new event for a session that is no longer open.',
  },
  recording_external_id_conflict: {
    status: 409,
    message: 'recording-external-id-conflict',
    description: 'A recording with the same `record.externalId` exists; `recordingId` names it (the body to recover with).',
  },
  idempotency_key_in_progress: {
    status: 409,
    message: 'A request with this Idempotency-Key is still in progress; retry shortly.',
    description: 'A request with the same `Idempotency-Key` is still running after a few seconds of waiting for it; nothing was done.',
  },
  // 410
  upload_closed: {
    status: 410,
    message: 'The upload is closed; create a new upload.',
    description: 'A tus PATCH to an upload that was cancelled, failed or expired.',
  },
  // 413
  payload_too_large: { status: 413, message: 'The request body is too large.', description: "The body exceeds the route's limit." },
  otlp_export_too_large: {
    status: 413,
    message: 'The OTLP export holds more than one export may.',
    description:
      'OTLP ingest: the export holds more spans or log records (`OTLP_MAX_RECORDS_PER_EXPORT`), attributes or events on one element (`OTLP_MAX_ATTRIBUTES`) or values in all (`OTLP_MAX_VALUES_PER_EXPORT`) than one export may, or its gzip inflates more than `OTLP_MAX_INFLATION_RATIO` times; the message says which. Send smaller batches (`OTEL_BSP_MAX_EXPORT_BATCH_SIZE`, `OTEL_BLRP_MAX_EXPORT_BATCH_SIZE`).',
  },
  recording_payload_too_large: {
    status: 413,
    message: 'The request body is too large.',
    description: 'Creating a recording: the body exceeds its limit.',
  },
  too_many_utterances: {
    status: 413,
    message: 'The transcript has more than 10,000 utterances.',
    description: 'A supplied transcript has more than 10,000 utterances.',
  },
  transcript_too_large: {
    status: 413,
    message: 'The transcript has more than 2,000,000 characters of text.',
    description: 'A supplied transcript has more than 2,000,000 characters.',
  },
  session_message_too_large: {
    status: 413,
    message: 'A message of the session is past the per-message limit.',
    description: 'An uploaded coding-agent session has a message past the per-message limit (`message`, `role`, `characters`, `limit`).',
  },
  upload_too_large: {
    status: 413,
    message: 'The upload is larger than an upload may be.',
    description: "A direct upload's `fileSize` is past the limit (`maxBytes`).",
  },
  storage_quota_exceeded: {
    status: 413,
    message: "The upload does not fit in the organization's storage quota.",
    description: "The upload does not fit in the organization's storage quota (`quotaBytes`, `usedBytes`, `fileSize`).",
  },
  // 415
  unsupported_media_type: {
    status: 415,
    message: 'Unsupported request encoding or content type.',
    description: 'The body is not JSON (Content-Type) or its encoding is not supported.',
  },
  // 416
  range_not_satisfiable: {
    status: 416,
    message: 'The requested range is outside the media.',
    description: 'A playback byte range outside the media.',
  },
  // 422
  invalid_metadata_value: {
    status: 422,
    message: 'A metadata value does not fit its field.',
    description:
      "A metadata value names a field of another source or does not match the field's type (`externalId`, `fieldId`, `fieldType`, `reason`).",
  },
  idempotency_key_reused: {
    status: 422,
    message: 'This Idempotency-Key was used with another request (method, path or body); use a new key for a new request.',
    description: 'The `Idempotency-Key` was sent within 24 hours with another method, path or body by the same credential.',
  },
  // 429
  rate_limited: {
    status: 429,
    message: 'Rate limit exceeded; retry later.',
    description: "Past the route's rate limit, per key, user or organization (`retryAfterSeconds`, `Retry-After`).",
  },
  too_many_exports: {
    status: 429,
    message: 'Too many exports are running; retry later.',
    description:
      'The organization export: one export of an organization runs at a time (every replica), and at most `EXPORT_MAX_CONCURRENT` per API process; `Retry-After` says when to try again.',
  },
  // 5xx
  internal_error: {
    status: 500,
    message: 'Internal server error.',
    description: 'An unexpected failure; no internals, the `requestId` finds the log line.',
  },
  recorder_failed: {
    status: 502,
    message: 'The recorder could not create the bot.',
    description: 'The meeting recorder refused or failed to create the bot.',
  },
  server_busy: {
    status: 503,
    message: 'The service is busy; retry later.',
    description: 'Too many large bodies are being checked at once (`Retry-After`).',
    headers: { 'Retry-After': '1' },
  },
  database_unavailable: {
    status: 503,
    message: 'The service is temporarily unavailable (database); retry later.',
    description: 'PostgreSQL is unreachable (`Retry-After`).',
    headers: { 'Retry-After': '5' },
  },
  temporal_unavailable: {
    status: 503,
    message: 'The service is temporarily unavailable (temporal); retry later.',
    description: 'Temporal is unreachable (`Retry-After`).',
    headers: { 'Retry-After': '5' },
  },
  session_parse_timeout: {
    status: 503,
    message: 'Reading the session file took too long and was stopped. Retry later, or upload a smaller file.',
    description: 'Reading an uploaded session file ran past its time budget (`budgetMs`, `Retry-After`).',
    headers: { 'Retry-After': '5' },
  },
  starting: {
    status: 503,
    message: 'Intake is still starting.',
    description: '`GET /readyz` while the service is still starting (`Retry-After`).',
  },
  not_ready: { status: 503, message: 'PostgreSQL is unavailable.', description: '`GET /readyz` while PostgreSQL is unreachable.' },
} as const satisfies Record<string, ErrorEntry>;

export type ErrorKey = keyof typeof ERROR_CATALOGUE;

/** The keys whose status is `S` (the subclasses of AppError take only theirs). */
export type ErrorKeyWithStatus<S extends number> = {
  [K in ErrorKey]: (typeof ERROR_CATALOGUE)[K]['status'] extends S ? K : never;
}[ErrorKey];

export function errorEntry(key: ErrorKey): ErrorEntry {
  return ERROR_CATALOGUE[key];
}

/** The errorCode a response carries for a key. */
export function errorCodeOf(key: ErrorKey): string {
  return errorEntry(key).code ?? key;
}

export const ERROR_KEYS = Object.keys(ERROR_CATALOGUE) as ErrorKey[];

export function isErrorKey(value: string): value is ErrorKey {
  return Object.hasOwn(ERROR_CATALOGUE, value);
}
