// snowflake-sdk failures → DriverError. Retry follows the class of failure: the network, HTTP
// 5xx/429, timeouts and expired session tokens pass; bad credentials, missing objects and SQL
// errors do not. The message is the warehouse's own words (docs/api.md#errors) with any password or
// private key scrubbed out.
import { DriverError } from "../../shared/errors.ts";
import { CdcFeedLostError, SourceObjectNotFoundError } from "./types.ts";

export interface Secrets {
  password?: string | undefined;
  privateKey?: string | undefined;
}

type SdkError = { message?: unknown; code?: unknown; sqlState?: unknown; name?: unknown; response?: { statusCode?: unknown } };

/** Warehouse error codes: 002003 object does not exist, 000904 invalid identifier. */
const TABLE_MISSING = new Set(["002003", "002043"]);
const COLUMN_MISSING = new Set(["000904"]);
/** Session token expired or gone (390112, 390114, 390111, 390104): a new login fixes it. */
const SESSION_GONE = new Set(["390104", "390111", "390112", "390114"]);
/** Statement timeout or cancelled (000630, 000604), warehouse busy/resuming (000625, 390505). */
const RETRYABLE_CODES = new Set(["000630", "000604", "000625", "390505"]);

/** Change tracking off for the range, or the AT time is past the table's retention. */
const FEED_LOST = /change tracking is not enabled|time travel data is not available|beyond the allowed time travel period|before the object creation time/i;

function scrub(message: string, secrets: Secrets): string {
  let out = message;
  if (secrets.password && secrets.password.length >= 3) out = out.replaceAll(secrets.password, "***");
  if (secrets.privateKey) {
    out = out.replaceAll(secrets.privateKey, "***");
    // A key may be echoed reformatted: drop any long base64 run, and any PEM block.
    out = out.replace(/-----BEGIN[^-]*-----[\s\S]*?-----END[^-]*-----/g, "***").replace(/[A-Za-z0-9+/=]{64,}/g, "***");
  }
  return out;
}

/** Whether the SDK's failure is of a passing kind; it becomes the DriverError's `retryable`. */
function transientSdkFailure(e: SdkError, code: string): boolean {
  if (SESSION_GONE.has(code) || RETRYABLE_CODES.has(code)) return true;
  if (e.name === "NetworkError" || e.name === "RequestTimeoutError" || e.name === "LargeResultSetError") return true;
  const status = Number(e.response?.statusCode ?? 0);
  return e.name === "RequestFailedError" && (status === 429 || status >= 500 || status === 0);
}

export function toDriverError(err: unknown, secrets: Secrets, operation: string): DriverError {
  if (err instanceof DriverError) return err;
  const e = (typeof err === "object" && err !== null ? err : { message: String(err) }) as SdkError;
  const code = e.code === undefined || e.code === null ? "" : String(e.code);
  const message = scrub(typeof e.message === "string" && e.message ? e.message : "unknown warehouse error", secrets);
  const sqlState = typeof e.sqlState === "string" ? e.sqlState : undefined;
  // Never the SDK's error itself as the cause: a network error carries the request, whose body
  // at login holds the password or the signed token.
  const cause = { name: typeof e.name === "string" ? e.name : "Error", code, sqlState };
  if (FEED_LOST.test(message)) return new CdcFeedLostError(message, cause);
  if (TABLE_MISSING.has(code)) return new SourceObjectNotFoundError("table", message, cause);
  if (COLUMN_MISSING.has(code)) return new SourceObjectNotFoundError("column", message, cause);
  return new DriverError(message, { retryable: transientSdkFailure(e, code), cause, context: { code, sqlState, operation } });
}
