import { defineRoute } from "../../http/route.ts";
import { ENVIRONMENT_HEADER } from "../environments/service.ts";
import { QueryRequest, QueryResult } from "./schemas.ts";
import { queryVectorTable } from "./service.ts";

export const queryRoutes = [
  defineRoute({
    method: "POST",
    path: "/v1/vector-tables/:vector_table_id/query",
    tag: "Query",
    summary: "Similarity search over a vector table, with metadata filters (any key permission)",
    auth: "api_key",
    errors: ["vector_table_not_ready", "sync_behind", "source_error", "provider_error"],
    readOnly: true,
    body: QueryRequest,
    headers: [{ name: "X-Environment-Id", description: "When sent, the vector table must be in this environment (else 404)" }],
    response: QueryResult,
    handler: ({ services, actor, params, body, headers }) => queryVectorTable(services, actor, params.vector_table_id, body, headers.get(ENVIRONMENT_HEADER)),
  }),
];
