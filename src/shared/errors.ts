// One closed set of error codes (docs/api.md#errors). `httpStatus` switches without a default, so adding
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
  | "sync_running"
  | "sync_behind"
  | "invitation_expired"
  | "payload_too_large"
  | "rate_limited"
  | "source_error"
  | "provider_error"
  | "storage_full"
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
    case "sync_running":
    case "sync_behind":
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
    case "storage_full":
      return 507;
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

export const unauthorized = (message = "A valid bearer credential is required") => new AppError("unauthorized", message);

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

/**
 * Whether a failure is worth another try (the scheduler's retry rule, STYLE 3). Our own AppError
 * is a refusal that trying again would repeat; a DriverError says for itself; anything else (an
 * error nobody classified) gets another try, since the task's attempts bound the cost.
 */
export function isRetryable(err: unknown): boolean {
  if (err instanceof AppError) return false;
  if (err instanceof DriverError) return err.retryable;
  return true;
}

// SQLite says SQLITE_FULL ("database or disk is full"), node:fs and native addons ENOSPC or EDQUOT
// ("no space left on device", "disk quota exceeded"); drivers may wrap either as a cause.
const FULL_CODES = new Set(["SQLITE_FULL", "ENOSPC", "EDQUOT"]);
const FULL_MESSAGE = /database or disk is full|no space left on device|disk quota exceeded|\bENOSPC\b|\bSQLITE_FULL\b/i;

/** True when `err` (or an error it wraps) says the disk is full. */
export function isStorageFull(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && FULL_CODES.has(code)) return true;
    if (FULL_MESSAGE.test(e.message)) return true;
  }
  return false;
}

/** The message of the innermost cause, e.g. "SQLITE_FULL: database or disk is full". */
export function rootMessage(err: unknown): string {
  let e = err;
  for (let depth = 0; e instanceof Error && e.cause instanceof Error && depth < 8; depth++) e = e.cause;
  return e instanceof Error ? e.message : String(e);
}

/** 507 `storage_full` (docs/api.md#errors): nothing the caller did wrong, and nothing to retry at once. */
export const storageFull = () =>
  new AppError("storage_full", "The service's storage is full; reads keep working, and writes work again once disk space is freed");

/**
 * What an error boundary answers for a thrown value it did not raise itself, when that value has
 * a meaning for the client: a full disk is 507, not 500. Null: an unexpected error (500).
 */
export function knownFailure(err: unknown): AppError | null {
  if (err instanceof AppError) return err;
  if (isStorageFull(err)) return storageFull();
  return null;
}

export type ErrorBody = { error: { code: ErrorCode; message: string; details?: unknown } };

export function errorBody(err: AppError): ErrorBody {
  const body: ErrorBody = { error: { code: err.code, message: err.message } };
  if (err.details !== undefined) body.error.details = err.details;
  return body;
}
