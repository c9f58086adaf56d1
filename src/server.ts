import { trpcHandler, TRPC_PREFIX } from "../rpc/router.ts";
import { buildApp } from "./http/app.ts";
import { allRoutes } from "./http/routes.ts";
import type { Services } from "./services.ts";
import { VERSION } from "./version.ts";

// Bun's own cap sits far above ours so that our reader, not Bun, answers 413 with the error body.
const TRANSPORT_BODY_LIMIT = 64 * 1024 * 1024;

export function createHttpApp(services: Services) {
  return buildApp(services, allRoutes(VERSION), [{ prefix: TRPC_PREFIX, fetch: trpcHandler(services) }]);
}

export type RunningServer = { url: string; port: number; stop(): Promise<void> };

export function listen(services: Services, host: string, port: number): RunningServer {
  const app = createHttpApp(services);
  app.listen({ hostname: host, port, maxRequestBodySize: TRANSPORT_BODY_LIMIT });
  const bound = app.server!;
  const shownHost = host.includes(":") ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${bound.port}`,
    port: bound.port!,
    stop: async () => {
      await app.stop(true);
    },
  };
}
