import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import type { Services } from "../src/services.ts";
import { readLimited } from "../src/http/body.ts";
import { createRpcContext } from "./context.ts";
import { publicProcedure, router } from "./init.ts";

export const appRouter = router({
  health: publicProcedure.query(() => ({ status: "ok" as const })),
});

export type AppRouter = typeof appRouter;

export const TRPC_PREFIX = "/trpc";

/** Serves tRPC over fetch; mounted by the HTTP app beside the REST routes. */
export function trpcHandler(services: Services) {
  return async (request: Request, requestId: string) => {
    // The same 1 MiB cap as REST: read (bounded) before tRPC sees the body.
    const body = request.method === "GET" || request.method === "HEAD" ? undefined : await readLimited(request);
    const req = new Request(request.url, { method: request.method, headers: request.headers, body });
    return fetchRequestHandler({
      endpoint: TRPC_PREFIX,
      req,
      router: appRouter,
      createContext: () => createRpcContext(services, request, requestId, null),
      onError: ({ error }) => {
        if (error.code === "INTERNAL_SERVER_ERROR") services.logger.error({ err: error.cause ?? error, request_id: requestId }, "unexpected rpc error");
      },
    });
  };
}
