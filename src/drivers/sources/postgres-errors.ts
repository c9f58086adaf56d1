// Postgres failures → DriverError. Whether to retry follows the error's class: the network and
// an overloaded or restarting server pass; credentials, missing objects and bad SQL do not. The
// message is the database's own words (docs/api.md#errors), with the password scrubbed just in case.
import { DriverError } from "../../shared/errors.ts";
import { CdcFeedLostError, SourceObjectNotFoundError } from "./types.ts";

/**
 * SQLSTATE classes and codes worth retrying: 08 connection, 53 resources, 57 operator
 * intervention (restart, cancel, timeout), 58 system, 40 serialization/deadlock, 55P03 lock
 * timeout, 55006 object in use (a replication slot still held by a dying consumer).
 */
const RETRYABLE_CLASSES = new Set(["08", "53", "57", "58", "40"]);
const RETRYABLE_CODES = new Set(["55P03", "55006"]);

/** Node and postgres.js codes for a network that failed before or during the session. */
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE",
  "EAI_AGAIN",
  "CONNECT_TIMEOUT",
  "CONNECTION_CLOSED",
  "CONNECTION_DESTROYED",
  "CONNECTION_ENDED",
]);

type ErrorLike = { message?: unknown; code?: unknown; name?: unknown };

function scrub(message: string, secret: string | undefined): string {
  return secret && secret.length >= 3 ? message.replaceAll(secret, "***") : message;
}

export interface ErrorContext {
  password?: string | undefined;
  /** What we were doing, for the log: "scan articles", "connect". */
  operation?: string;
}

export function toDriverError(err: unknown, ctx: ErrorContext = {}): DriverError {
  if (err instanceof DriverError) return err;
  const e = (typeof err === "object" && err !== null ? err : { message: String(err) }) as ErrorLike;
  const code = typeof e.code === "string" ? e.code : "";
  const message = scrub(typeof e.message === "string" && e.message ? e.message : "unknown database error", ctx.password);
  const context = { code, operation: ctx.operation };
  const isSqlState = e.name === "PostgresError" && /^[0-9A-Z]{5}$/.test(code);

  if (isSqlState) {
    if (code === "42P01" || code === "3F000") return new SourceObjectNotFoundError("table", message, err);
    if (code === "42703") return new SourceObjectNotFoundError("column", message, err);
    if (code === "42704" && /replication slot/.test(message)) return new CdcFeedLostError(message, err);
    // The walsender decodes with the catalog as of each change: a dropped publication stays
    // missing for every change after the drop, so the slot must be recreated with it.
    if (code === "42704" && /publication/.test(message)) return new CdcFeedLostError(`the publication was dropped on the source (${message})`, err);
    if (code === "55000" && /replication slot|WAL/i.test(message)) return new CdcFeedLostError(message, err);
    const retryable = RETRYABLE_CLASSES.has(code.slice(0, 2)) || RETRYABLE_CODES.has(code);
    return new DriverError(message, { retryable, cause: err, context });
  }
  return new DriverError(message, { retryable: NETWORK_CODES.has(code), cause: err, context });
}
