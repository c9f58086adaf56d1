import type { TRPC_ERROR_CODE_KEY } from "@trpc/server";
import { httpStatus, type ErrorCode } from "../src/shared/errors.ts";

// tRPC names its error codes after HTTP statuses, so ours follow through the one status switch
// in src/shared/errors.ts: a new code gets its tRPC code the moment it gets its status.
const BY_STATUS: Record<number, TRPC_ERROR_CODE_KEY> = {
  400: "BAD_REQUEST",
  401: "UNAUTHORIZED",
  403: "FORBIDDEN",
  404: "NOT_FOUND",
  409: "CONFLICT",
  410: "PRECONDITION_FAILED", // tRPC has no 410; the REST status still travels in data.httpStatus
  413: "PAYLOAD_TOO_LARGE",
  429: "TOO_MANY_REQUESTS",
  502: "BAD_GATEWAY",
  507: "SERVICE_UNAVAILABLE", // tRPC has no 507 (storage_full); data.httpStatus carries it
};

export function trpcCode(code: ErrorCode): TRPC_ERROR_CODE_KEY {
  return BY_STATUS[httpStatus(code)] ?? "INTERNAL_SERVER_ERROR";
}
