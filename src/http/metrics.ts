// GET /metrics: the Prometheus exposition of this service's registry (docs/operability.md#metrics).
// Open by default, like most exporters on a private network; with VECSYNC_METRICS_TOKEN set it
// asks for `Authorization: Bearer <token>`. It is not an API operation (no /v1, not JSON), so it
// stays out of the OpenAPI document, as the reference pages do.
import { createHash, timingSafeEqual } from "node:crypto";
import type { Services } from "../services.ts";
import { unauthorized } from "../shared/errors.ts";
import { bearerToken } from "./auth.ts";
import { defineRoute } from "./route.ts";

const digest = (text: string) => createHash("sha256").update(text).digest();

/** Throws 401 unless the request carries the configured token; compared in constant time (equal-length digests). */
function requireMetricsToken(services: Services, headers: Headers): void {
  const expected = services.config.metricsToken;
  if (expected === null) return;
  const given = bearerToken(headers);
  if (!timingSafeEqual(digest(given), digest(expected))) throw unauthorized("The metrics token is not valid");
}

export const metricsRoutes = [
  defineRoute({
    method: "GET",
    path: "/metrics",
    tag: "Meta",
    summary: "Prometheus metrics of this process (text format)",
    auth: "none",
    handler: async ({ services, headers }) => {
      requireMetricsToken(services, headers);
      const { body, contentType } = await services.metrics.scrape();
      return new Response(body, { headers: { "content-type": contentType, "cache-control": "no-store" } });
    },
  }),
];
