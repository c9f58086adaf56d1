import type { Services } from "../src/services.ts";

/** What every procedure sees; built the same way as a REST route's context. */
export type RpcContext = { services: Services; headers: Headers; requestId: string; ip: string | null };

export function createRpcContext(services: Services, request: Request, requestId: string, ip: string | null): RpcContext {
  return { services, headers: request.headers, requestId, ip };
}
