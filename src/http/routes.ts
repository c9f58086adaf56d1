import { domainRoutes } from "./domain-routes.ts";
import { docsRoutes } from "./docs.ts";
import { healthRoutes } from "./health.ts";
import { metricsRoutes } from "./metrics.ts";
import { buildOpenApi } from "./openapi.ts";
import type { AnyRoute } from "./route.ts";

/**
 * Every REST route the service serves. OpenAPI documents the `/v1` API from the same list; the
 * health checks (docs/running.md#health) stay out of it: an API document promises each operation
 * its 4xx answers, and a probe has none.
 */
export function allRoutes(version: string): AnyRoute[] {
  let doc: unknown;
  const openApi = () => (doc ??= buildOpenApi(domainRoutes, version));
  // The reference pages and /metrics are not API operations: they stay out of the OpenAPI document.
  return [...healthRoutes, ...domainRoutes, ...docsRoutes(openApi), ...metricsRoutes];
}
