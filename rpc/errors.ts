import type { TRPC_ERROR_CODE_KEY } from "@trpc/server";
import type { ErrorCode } from "../src/shared/errors.ts";

/**
 * Our error code → tRPC's. Like `httpStatus` in src/shared/errors.ts it switches without a
 * default, so a new code is a type error here until it is given a tRPC code. tRPC names its codes
 * after HTTP statuses; where it has none for our status, the REST status still travels in
 * data.httpStatus (rpc/init.ts).
 */
export function trpcCode(code: ErrorCode): TRPC_ERROR_CODE_KEY {
  switch (code) {
    case "validation_error":
    case "invalid_request":
      return "BAD_REQUEST";
    case "unauthorized":
      return "UNAUTHORIZED";
    case "insufficient_permission":
    case "insufficient_role":
      return "FORBIDDEN";
    case "not_found":
      return "NOT_FOUND";
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
      return "CONFLICT";
    case "invitation_expired":
      return "PRECONDITION_FAILED"; // tRPC has no 410
    case "payload_too_large":
      return "PAYLOAD_TOO_LARGE";
    case "rate_limited":
      return "TOO_MANY_REQUESTS";
    case "source_error":
    case "provider_error":
      return "BAD_GATEWAY";
    case "storage_full":
      return "SERVICE_UNAVAILABLE"; // tRPC has no 507
    case "internal":
      return "INTERNAL_SERVER_ERROR";
  }
}
