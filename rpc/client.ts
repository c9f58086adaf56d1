import { createTRPCClient, httpBatchLink } from "@trpc/client";
import type { AppRouter } from "./router.ts";

export type VecsyncClientOptions = { url: string } & ({ apiKey: string } | { accessToken: string } | {});

/**
 * A typed client for TypeScript apps: `createVecsyncClient({ url, apiKey })` for data-plane calls,
 * `{ url, accessToken }` for organization management.
 */
export function createVecsyncClient(opts: VecsyncClientOptions) {
  const token = "apiKey" in opts ? opts.apiKey : "accessToken" in opts ? opts.accessToken : null;
  return createTRPCClient<AppRouter>({
    links: [
      httpBatchLink({
        url: `${opts.url.replace(/\/$/, "")}/trpc`,
        headers: () => (token ? { authorization: `Bearer ${token}` } : {}),
      }),
    ],
  });
}

export type { AppRouter };
