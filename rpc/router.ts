import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import type { Services } from "../src/services.ts";
import { readLimited } from "../src/http/body.ts";
import { AppError } from "../src/shared/errors.ts";
import { authRouter } from "../src/domains/auth/rpc.ts";
import { organizationsRouter } from "../src/domains/organizations/rpc.ts";
import { apiKeysRouter } from "../src/domains/api-keys/rpc.ts";
import { environmentsRouter } from "../src/domains/environments/rpc.ts";
import { embeddingProvidersRouter } from "../src/domains/embedding-providers/rpc.ts";
import { connectionsRouter } from "../src/domains/connections/rpc.ts";
import { tasksRouter } from "../src/domains/tasks/rpc.ts";
import { vectorTablesRouter } from "../src/domains/vector-tables/rpc.ts";
import { syncRouter } from "../src/domains/sync/rpc.ts";
import { queryRouter } from "../src/domains/query/rpc.ts";
import { createRpcContext } from "./context.ts";
import { publicProcedure, router } from "./init.ts";

export const appRouter = router({
  health: publicProcedure.query(() => ({ status: "ok" as const })),
  auth: authRouter,
  organizations: organizationsRouter,
  apiKeys: apiKeysRouter,
  environments: environmentsRouter,
  embeddingProviders: embeddingProvidersRouter,
  connections: connectionsRouter,
  tasks: tasksRouter,
  vectorTables: vectorTablesRouter,
  sync: syncRouter,
  query: queryRouter,
});

export type AppRouter = typeof appRouter;

export const TRPC_PREFIX = "/trpc";

/**
 * The most calls one batch may carry (docs/security.md#requests). Unbounded, one request could
 * hold hundreds of calls that each pass every per-request check at once; the typed client sends
 * at most this many per request (packages/client).
 */
export const MAX_BATCH_CALLS = 20;

/** Serves tRPC over fetch; mounted by the HTTP app beside the REST routes. */
export function trpcHandler(services: Services) {
  return async (request: Request, requestId: string, ip: string | null = null) => {
    // The same 1 MiB cap as REST: read (bounded) before tRPC sees the body.
    const body = request.method === "GET" || request.method === "HEAD" ? undefined : await readLimited(request);
    const req = new Request(request.url, { method: request.method, headers: request.headers, body });
    return fetchRequestHandler({
      endpoint: TRPC_PREFIX,
      req,
      router: appRouter,
      maxBatchSize: MAX_BATCH_CALLS,
      createContext: ({ info }) => createRpcContext(services, request, requestId, ip, info),
      // AppError headers (e.g. Retry-After on 429) reach tRPC clients as they reach REST ones.
      responseMeta: ({ errors }) => ({ headers: Object.assign({}, ...errors.map((e) => (e.cause instanceof AppError ? e.cause.headers : {}))) }),
      onError: ({ error }) => {
        if (error.code === "INTERNAL_SERVER_ERROR") services.logger.error({ err: error.cause ?? error, request_id: requestId }, "unexpected rpc error");
      },
    });
  };
}
