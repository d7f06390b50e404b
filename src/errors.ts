/**
 * The closed set of errors the service raises on purpose. The API's error middleware maps each to
 * its status and a body `{message, errorCode, ...details}`; anything else becomes a 500 that shows
 * no internals.
 */
export type ErrorDetails = Record<string, unknown>;

export class AppError extends Error {
  override name = 'AppError';
  constructor(
    readonly status: number,
    readonly errorCode: string,
    message: string,
    readonly details: ErrorDetails = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export interface FieldError {
  path: string;
  message: string;
}

export class ValidationError extends AppError {
  constructor(
    readonly errors: FieldError[],
    message = 'The request is invalid.',
  ) {
    super(400, 'validation_failed', message, { errors });
  }
}

export class MalformedJsonError extends AppError {
  constructor() {
    super(400, 'malformed_json', 'The request body is not valid JSON.');
  }
}

export class ServerBusyError extends AppError {
  constructor(what: string) {
    super(503, 'server_busy', `The service is busy (${what}); retry later.`, {}, { 'Retry-After': '1' });
  }
}

export class UnauthenticatedError extends AppError {
  constructor(errorCode: 'unauthenticated' | 'invalid_credentials' | 'token_expired' | 'credential_revoked', message: string) {
    super(401, errorCode, message, {}, { 'WWW-Authenticate': 'Bearer realm="intake"' });
  }
}

export class ForbiddenError extends AppError {
  constructor(errorCode: string, message: string, details: ErrorDetails = {}) {
    super(403, errorCode, message, details);
  }
}

export class NotFoundError extends AppError {
  /** `details` name the id that was not found when a body carries several (`{folderId}`). */
  constructor(resource: string, details: ErrorDetails = {}) {
    super(404, 'not_found', `${resource} not found.`, { resource, ...details });
  }
}

export class ConflictError extends AppError {
  constructor(errorCode: string, message: string, details: ErrorDetails = {}) {
    super(409, errorCode, message, details);
  }
}

export class DependencyUnavailableError extends AppError {
  constructor(dependency: 'database' | 'temporal') {
    super(
      503,
      `${dependency}_unavailable`,
      `The service is temporarily unavailable (${dependency}); retry later.`,
      {},
      { 'Retry-After': '5' },
    );
  }
}

/** An uploaded coding-agent session with a message past the per-message limit (MCP: a tool error with this errorCode). */
export class SessionMessageTooLargeError extends AppError {
  constructor(details: { message: number; role: 'user' | 'assistant'; characters: number; limit: number }) {
    const count = (n: number) => n.toLocaleString('en-US');
    super(
      413,
      'session_message_too_large',
      `Message ${details.message} (${details.role}) has ${count(details.characters)} characters of text; the limit is ${count(details.limit)} a message. Remove it or shorten it, then upload again.`,
      details,
    );
  }
}

/** Reading an uploaded session file (parsing, masking) ran past its time budget and was stopped. */
export class SessionParseTimeoutError extends AppError {
  constructor(budgetMs: number) {
    super(
      503,
      'session_parse_timeout',
      `Reading the session file took longer than ${budgetMs / 1000} s and was stopped. Retry later, or upload a smaller file.`,
      { budgetMs },
      { 'Retry-After': '5' },
    );
  }
}
