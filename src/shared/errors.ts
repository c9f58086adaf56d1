// One closed set of error codes (CONTRACT 3). `httpStatus` switches without a default, so adding
// a code without deciding its status is a type error.

export type ErrorCode =
  | "validation_error"
  | "invalid_request"
  | "unauthorized"
  | "insufficient_permission"
  | "insufficient_role"
  | "not_found"
  | "name_taken"
  | "already_member"
  | "invitation_pending"
  | "in_use"
  | "environment_protected"
  | "backfill_running"
  | "already_paused"
  | "not_paused"
  | "organization_deleting"
  | "vector_table_not_ready"
  | "invitation_expired"
  | "payload_too_large"
  | "rate_limited"
  | "source_error"
  | "provider_error"
  | "internal";

export function httpStatus(code: ErrorCode): number {
  switch (code) {
    case "validation_error":
    case "invalid_request":
      return 400;
    case "unauthorized":
      return 401;
    case "insufficient_permission":
    case "insufficient_role":
      return 403;
    case "not_found":
      return 404;
    case "name_taken":
    case "already_member":
    case "invitation_pending":
    case "in_use":
    case "environment_protected":
    case "backfill_running":
    case "already_paused":
    case "not_paused":
    case "organization_deleting":
    case "vector_table_not_ready":
      return 409;
    case "invitation_expired":
      return 410;
    case "payload_too_large":
      return 413;
    case "rate_limited":
      return 429;
    case "source_error":
    case "provider_error":
      return 502;
    case "internal":
      return 500;
  }
}

export type ErrorDetail = { path: string; message: string };

/** An error we raise on purpose; its message is written for the API's user. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: unknown;
  /** Extra response headers, e.g. `Retry-After` for `rate_limited`. */
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, opts: { details?: unknown; headers?: Record<string, string> } = {}) {
    super(message);
    this.name = "AppError";
    this.code = code;
    this.details = opts.details;
    this.headers = opts.headers ?? {};
  }

  get status(): number {
    return httpStatus(this.code);
  }
}

export const notFound = (what: string) => new AppError("not_found", `${what} not found`);

export function validationError(details: ErrorDetail[], message = "The request is invalid"): AppError {
  const first = details[0];
  const summary = first ? `${message}: ${first.path ? `${first.path} ` : ""}${first.message}` : message;
  return new AppError("validation_error", summary, { details });
}

/**
 * A failure in a driver (source database, embedding provider, store). `retryable` lets the
 * scheduler decide whether to try again; services map it to 502 with the upstream's own words.
 */
export class DriverError extends Error {
  readonly retryable: boolean;
  readonly context: Record<string, unknown>;

  constructor(message: string, opts: { retryable: boolean; cause?: unknown; context?: Record<string, unknown> }) {
    super(message, { cause: opts.cause });
    this.name = "DriverError";
    this.retryable = opts.retryable;
    this.context = opts.context ?? {};
  }
}

export type ErrorBody = { error: { code: ErrorCode; message: string; details?: unknown } };

export function errorBody(err: AppError): ErrorBody {
  const body: ErrorBody = { error: { code: err.code, message: err.message } };
  if (err.details !== undefined) body.error.details = err.details;
  return body;
}
