import { errorCodeOf, errorEntry, type ErrorKey, type ErrorKeyWithStatus } from './error-catalogue.js';

export { ERROR_CATALOGUE, ERROR_KEYS, errorCodeOf, isErrorKey, type ErrorKey } from './error-catalogue.js';

/**
 * The closed set of errors the service raises on purpose: each is a key of the error catalogue
 * (src/error-catalogue.ts), which gives its status. The API's error middleware answers with that
 * status and a body `{message, errorCode, ...details}`; anything else becomes a 500 that shows no
 * internals.
 */
export type ErrorDetails = Record<string, unknown>;

export interface ErrorOptions {
  /** Replaces the catalogue's message where the message carries information (which field, which limit). */
  message?: string;
  details?: ErrorDetails;
  /** Added to (or replacing) the catalogue's headers. */
  headers?: Record<string, string>;
}

export class AppError extends Error {
  override name = 'AppError';
  readonly status: number;
  readonly errorCode: string;
  readonly details: ErrorDetails;
  readonly headers: Record<string, string>;
  constructor(
    readonly key: ErrorKey,
    options: ErrorOptions = {},
  ) {
    const entry = errorEntry(key);
    super(options.message ?? entry.message);
    this.status = entry.status;
    this.errorCode = errorCodeOf(key);
    this.details = options.details ?? {};
    this.headers = { ...entry.headers, ...options.headers };
  }
}

export interface FieldError {
  path: string;
  message: string;
}

export class ValidationError extends AppError {
  constructor(
    readonly errors: FieldError[],
    message?: string,
  ) {
    super('validation_failed', { message, details: { errors } });
  }
}

export class MalformedJsonError extends AppError {
  constructor() {
    super('malformed_json');
  }
}

export class ServerBusyError extends AppError {
  constructor(what: string) {
    super('server_busy', { message: `The service is busy (${what}); retry later.` });
  }
}

export class UnauthenticatedError extends AppError {
  constructor(key: ErrorKeyWithStatus<401>, message: string) {
    super(key, { message });
  }
}

export class ForbiddenError extends AppError {
  constructor(key: ErrorKeyWithStatus<403>, message?: string, details: ErrorDetails = {}) {
    super(key, { message, details });
  }
}

export class NotFoundError extends AppError {
  /** `details` name the id that was not found when a body carries several (`{folderId}`). */
  constructor(resource: string, details: ErrorDetails = {}) {
    super('not_found', { message: `${resource} not found.`, details: { resource, ...details } });
  }
}

export type ConflictKey = ErrorKeyWithStatus<409>;

export class ConflictError extends AppError {
  constructor(key: ConflictKey, message?: string, details: ErrorDetails = {}) {
    super(key, { message, details });
  }
}

export class DependencyUnavailableError extends AppError {
  constructor(dependency: 'database' | 'temporal') {
    super(`${dependency}_unavailable`);
  }
}

/** An uploaded coding-agent session with a message past the per-message limit (MCP: a tool error with this errorCode). */
export class SessionMessageTooLargeError extends AppError {
  constructor(details: { message: number; role: 'user' | 'assistant'; characters: number; limit: number }) {
    const count = (n: number) => n.toLocaleString('en-US');
    super('session_message_too_large', {
      message: `Message ${details.message} (${details.role}) has ${count(details.characters)} characters of text; the limit is ${count(details.limit)} a message. Remove it or shorten it, then upload again.`,
      details,
    });
  }
}

/** Reading an uploaded session file (parsing, masking) ran past its time budget and was stopped. */
export class SessionParseTimeoutError extends AppError {
  constructor(budgetMs: number) {
    super('session_parse_timeout', {
      message: `Reading the session file took longer than ${budgetMs / 1000} s and was stopped. Retry later, or upload a smaller file.`,
      details: { budgetMs },
    });
  }
}
