import { authRoutes } from "../domains/auth/http.ts";
import { organizationRoutes } from "../domains/organizations/http.ts";
import { apiKeyRoutes } from "../domains/api-keys/http.ts";
import { environmentRoutes } from "../domains/environments/http.ts";
import { embeddingProviderRoutes } from "../domains/embedding-providers/http.ts";
import { connectionRoutes } from "../domains/connections/http.ts";
import { taskRoutes } from "../domains/tasks/http.ts";
import { vectorTableRoutes } from "../domains/vector-tables/http.ts";
import { syncRoutes } from "../domains/sync/http.ts";
import { queryRoutes } from "../domains/query/http.ts";
import type { AnyRoute } from "./route.ts";

/** Each domain's `http.ts` routes, in the order they appear in the API reference. */
export const domainRoutes: AnyRoute[] = [...authRoutes, ...organizationRoutes, ...apiKeyRoutes, ...environmentRoutes, ...embeddingProviderRoutes, ...connectionRoutes, ...vectorTableRoutes, ...syncRoutes, ...queryRoutes, ...taskRoutes];
