import type { AnyRoute } from "./route.ts";

/** Each domain's `http.ts` routes, in the order they appear in the API reference. */
export const domainRoutes: AnyRoute[] = [];
