// Each operation's error responses in the OpenAPI document (docs/api.md#errors): the codes a route can
// answer, derived from its shape — auth scheme, method, body, query, path — plus the ones it declares
// (`errors` in defineRoute), grouped by status, each status with the error body restricted to its codes.
import { httpStatus, type ErrorCode } from "../shared/errors.ts";
import type { AnyRoute } from "./route.ts";

/**
 * What each code means, as the document tells it. A Record over the closed set: a new code is a
 * type error here until it is described.
 */
export const ERROR_CODE_DOCS: Record<ErrorCode, string> = {
  validation_error: "the request is invalid: malformed JSON, a missing, mistyped, unknown or out-of-range field or query parameter, or a rule of the operation (`details` lists every problem as `{path, message}`)",
  invalid_request: "the e-mail address or the code is malformed",
  unauthorized: "the credential is missing, malformed, invalid, expired or revoked, or the wrong kind for the operation",
  insufficient_permission: "a `read_only` API key; this operation needs permission `full`",
  insufficient_role: "the caller's role in the organization does not allow this",
  not_found: "no such resource, or it belongs to another organization",
  name_taken: "the name is already used",
  already_member: "the person is already a member of the organization",
  invitation_pending: "the e-mail address already has a pending invitation",
  in_use: "other resources still use it (`details` names them)",
  environment_protected: "the `prod` environment cannot be deleted",
  backfill_running: "a backfill or re-backfill of the vector table is pending or running",
  sync_running: "a sync pass, backfill or re-backfill of the vector table is pending or running",
  sync_behind: "the vector table had not applied the source up to `min_synced_through` within `wait_ms` (`details.synced_through`: how far it had)",
  already_paused: "sync of the vector table is already paused",
  not_paused: "sync of the vector table is not paused",
  organization_deleting: "the organization is being deleted",
  vector_table_not_ready: "the vector table has no vectors to serve yet (`details.sync_status`)",
  invitation_expired: "the invitation has expired",
  payload_too_large: "the request body is over 1 MiB",
  rate_limited: "a sign-in rate limit was hit; the `Retry-After` header says how many seconds to wait",
  source_error: "the source database failed; the message gives its own words",
  provider_error: "the embedding provider failed or did not answer within 15 s; the message gives its own words",
  storage_full: "the service's disk is full; reads keep working",
  internal: "an unexpected error; it is logged with the request id",
};

export const ERROR_CODES = Object.keys(ERROR_CODE_DOCS) as ErrorCode[];

const STATUS_TITLES: Record<number, string> = {
  400: "Bad request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not found",
  409: "Conflict",
  410: "Gone",
  413: "Payload too large",
  429: "Too many requests",
  500: "Internal error",
  502: "Bad gateway",
  507: "Insufficient storage",
};

export const RETRY_AFTER_REF = "#/components/headers/RetryAfter";

/** Whether a route changes anything: every method but GET, bar a POST declared `readOnly`. */
const writes = (route: AnyRoute) => route.method !== "GET" && !route.readOnly;

/** The codes a route can answer, in status order. */
export function errorCodesOf(route: AnyRoute): ErrorCode[] {
  const codes = new Set<ErrorCode>();
  const readsBody = route.method === "POST" || route.method === "PUT";
  if (route.body || route.query || readsBody) codes.add("validation_error");
  if (route.auth !== "none") codes.add("unauthorized");
  if (route.auth === "api_key" && writes(route)) codes.add("insufficient_permission");
  if (route.path.includes(":")) codes.add("not_found");
  if (readsBody) codes.add("payload_too_large");
  for (const code of route.errors ?? []) codes.add(code);
  if (writes(route)) codes.add("storage_full");
  codes.add("internal");
  return [...codes].sort((a, b) => httpStatus(a) - httpStatus(b) || ERROR_CODES.indexOf(a) - ERROR_CODES.indexOf(b));
}

/** The error body with `code` narrowed to `codes`. */
function errorSchema(codes: ErrorCode[]) {
  return {
    allOf: [
      { $ref: "#/components/schemas/Error" },
      { type: "object", properties: { error: { type: "object", properties: { code: { type: "string", enum: codes } } } } },
    ],
  };
}

/** `responses` entries for a route's errors: one per status, naming its codes and when each happens. */
export function errorResponses(route: AnyRoute): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of errorCodesOf(route)) byStatus.set(httpStatus(code), [...(byStatus.get(httpStatus(code)) ?? []), code]);
  const out: Record<string, unknown> = {};
  for (const [status, codes] of byStatus) {
    const description = `${STATUS_TITLES[status] ?? "Error"}: ${codes.map((c) => `\`${c}\` — ${ERROR_CODE_DOCS[c]}`).join("; ")}.`;
    const headers: Record<string, unknown> = { "x-request-id": { $ref: "#/components/headers/RequestId" } };
    if (codes.includes("rate_limited")) headers["Retry-After"] = { $ref: RETRY_AFTER_REF };
    out[String(status)] = { description, headers, content: { "application/json": { schema: errorSchema(codes) } } };
  }
  return out;
}

/** The `Error` component: the one error body (docs/api.md#errors). */
export const ERROR_COMPONENTS = {
  Error: {
    type: "object",
    description: "Every error answer has this body.",
    required: ["error"],
    properties: {
      error: {
        type: "object",
        required: ["code", "message"],
        properties: {
          code: { type: "string", enum: ERROR_CODES, description: "What went wrong; a closed set a client can switch on." },
          message: { type: "string", description: "A sentence for a person. It never contains a secret." },
          details: {
            description: "Optional. For `validation_error`, every problem found as `{path, message}`; some other codes carry an object (`in_use`: the resources in the way; `provider_error`, `source_error`: `retryable`; `vector_table_not_ready`: `sync_status`).",
            anyOf: [{ type: "array", items: { $ref: "#/components/schemas/ErrorDetail" } }, { type: "object" }],
          },
        },
      },
    },
  },
  ErrorDetail: {
    type: "object",
    required: ["path", "message"],
    properties: {
      path: { type: "string", description: "Where the problem is, e.g. `filters.price.gte` or `columns.1.filter_type`." },
      message: { type: "string" },
    },
  },
};
