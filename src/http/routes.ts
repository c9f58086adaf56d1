import { domainRoutes } from "./domain-routes.ts";
import { docsRoutes } from "./docs.ts";
import { healthRoutes } from "./health.ts";
import { metricsRoutes } from "./metrics.ts";
import { buildOpenApi } from "./openapi.ts";
import type { AnyRoute } from "./route.ts";

/** Every REST route the service serves; OpenAPI is generated from the same list. */
export function allRoutes(version: string): AnyRoute[] {
  const api = [...healthRoutes, ...domainRoutes];
  let doc: unknown;
  const openApi = () => (doc ??= buildOpenApi(api, version));
  // The reference pages and /metrics are not API operations: they stay out of the OpenAPI document.
  return [...api, ...docsRoutes(openApi), ...metricsRoutes];
}
