import { initTRPC, StandardSchemaV1Error, TRPCError } from "@trpc/server";
import { resolveActor } from "../src/http/auth.ts";
import type { KeyActor, UserActor } from "../src/shared/actor.ts";
import { AppError, httpStatus, knownFailure, type ErrorCode } from "../src/shared/errors.ts";
import type { RpcContext } from "./context.ts";
import { trpcCode } from "./errors.ts";

/** The error as REST would answer it, so both transports tell a client the same thing. */
export type RpcErrorData = { vecsync: { code: ErrorCode; message: string; details?: unknown }; httpStatus: number };

function toVecsyncError(error: TRPCError): RpcErrorData["vecsync"] {
  const cause = error.cause;
  if (cause instanceof AppError) return { code: cause.code, message: cause.message, ...(cause.details === undefined ? {} : { details: cause.details }) };
  if (cause instanceof StandardSchemaV1Error) {
    const details = cause.issues.map((i) => ({ path: (i.path ?? []).map((p) => String(typeof p === "object" ? p.key : p)).join("."), message: i.message }));
    return { code: "validation_error", message: "The request is invalid", details };
  }
  switch (error.code) {
    case "NOT_FOUND":
      return { code: "not_found", message: "No such procedure" };
    case "PARSE_ERROR":
    case "BAD_REQUEST":
    case "UNSUPPORTED_MEDIA_TYPE":
    case "METHOD_NOT_SUPPORTED":
      return { code: "validation_error", message: error.message };
    default:
      return { code: "internal", message: "An unexpected error occurred" };
  }
}

const t = initTRPC.context<RpcContext>().create({
  errorFormatter({ shape, error }) {
    const vecsync = toVecsyncError(error);
    // Never send a stack or an internal message to a client (docs/api.md#errors).
    const message = vecsync.code === "internal" ? vecsync.message : shape.message;
    // tRPC takes the HTTP status from data.httpStatus: our errors keep their REST status, tRPC's own
    // protocol errors (405, 415…) keep theirs.
    const ours = error.cause instanceof AppError || error.cause instanceof StandardSchemaV1Error || vecsync.code === "internal";
    const status = ours ? httpStatus(vecsync.code) : shape.data.httpStatus;
    return { ...shape, message, data: { code: shape.data.code, path: shape.data.path, httpStatus: status, vecsync } };
  },
});

/** Our AppErrors keep their meaning on the tRPC wire too. */
const mapErrors = t.middleware(async ({ next }) => {
  const result = await next();
  const known = result.ok ? null : knownFailure(result.error.cause);
  if (!result.ok && known) {
    result.error = new TRPCError({ code: trpcCode(known.code), message: known.message, cause: known });
  }
  return result;
});

export const router = t.router;
export const publicProcedure = t.procedure.use(mapErrors);

/** Procedures for signed-in people (JWT): organization management. */
export const userProcedure = publicProcedure.use(async ({ ctx, next }) => {
  const actor = (await resolveActor(ctx.services.authenticator, "jwt", ctx.headers)) as UserActor;
  return next({ ctx: { ...ctx, actor } });
});

/** Procedures for API keys: everything else. */
export const keyProcedure = publicProcedure.use(async ({ ctx, next }) => {
  const actor = (await resolveActor(ctx.services.authenticator, "api_key", ctx.headers)) as KeyActor;
  return next({ ctx: { ...ctx, actor } });
});
