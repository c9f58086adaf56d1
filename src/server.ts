import { trpcHandler, TRPC_PREFIX } from "../rpc/router.ts";
import { buildApp } from "./http/app.ts";
import { StartRefused } from "./data-dir.ts";
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
  const shownHost = host.includes(":") ? `[${host}]` : host;
  try {
    // Elysia's Bun adapter asks for SO_REUSEPORT, with which a second process binds the same port
    // and the kernel splits the requests between the two (issue 12). docs/running.md#one-process: refuse instead.
    app.listen({ hostname: host, port, maxRequestBodySize: TRANSPORT_BODY_LIMIT, reusePort: false });
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === "EADDRINUSE") throw new StartRefused(`address ${shownHost}:${port} is already in use`);
    if (code === "EACCES" || code === "EADDRNOTAVAIL") throw new StartRefused(`cannot listen on ${shownHost}:${port} (${code})`);
    throw err;
  }
  const bound = app.server!;
  return {
    url: `http://${shownHost}:${bound.port}`,
    port: bound.port!,
    stop: async () => {
      await app.stop(true);
    },
  };
}
