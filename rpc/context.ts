import { TRPCError } from "@trpc/server";
import type { TRPCRequestInfo } from "@trpc/server/http";
import type { Services } from "../src/services.ts";
import { AppError } from "../src/shared/errors.ts";

/** What every procedure sees; built the same way as a REST route's context. */
export type RpcContext = { services: Services; headers: Headers; requestId: string; ip: string | null };

/**
 * Sign-in calls travel alone (CONTRACT 4): a batch that holds an `auth.*` call beside others is
 * refused whole with 400, before any call runs, so a batch can never multiply guesses or e-mails
 * (the limits hold anyway; this keeps a single request from being a burst).
 */
export function createRpcContext(services: Services, request: Request, requestId: string, ip: string | null, info?: TRPCRequestInfo): RpcContext {
  if (info?.isBatchCall && info.calls.length > 1 && info.calls.some((c) => c.path.startsWith("auth."))) {
    const message = "Sign-in calls (auth.*) cannot be batched: send each in a request of its own";
    throw new TRPCError({ code: "BAD_REQUEST", message, cause: new AppError("validation_error", message) });
  }
  return { services, headers: request.headers, requestId, ip };
}
