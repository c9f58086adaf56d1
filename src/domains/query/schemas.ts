import { type } from "arktype";

/** The query text: any non-blank string (it is embedded as is). */
const QueryText = type("string").narrow((s, ctx) => s.trim().length > 0 || ctx.mustBe("a non-empty string"));

const queryFields = {
  query: QueryText,
  "limit?": "1 <= number.integer <= 100",
  "min_similarity_score?": "0 <= number <= 1 | null",
  // The filter language (docs/vector-tables.md#filters) is checked against the table's metadata columns by the
  // store's parser, which reports every problem with its path under `filters`.
  "filters?": "Record<string, unknown> | null",
} as const;

/** POST /v1/vector-tables/{id}/query (docs/vector-tables.md#query). */
export const QueryRequest = type({ "+": "reject", ...queryFields });
export type QueryRequest = typeof QueryRequest.infer;

/** tRPC input: the path parameter and the `X-Environment-Id` header become fields. */
export const QueryInput = type({ "+": "reject", ...queryFields, vector_table_id: "string", "environment_id?": "string" });

export const DEFAULT_QUERY_LIMIT = 10;

const MetadataValue = type("string | number | boolean | null");

/** docs/vector-tables.md#query. */
export const QueryResult = type({
  results: type({ id: "string", similarity_score: "number", metadata: type({ "[string]": MetadataValue }), embedded_text: "string" }).array(),
  query: "string",
  model: "string",
  total_results: "number.integer",
});
export type QueryResult = typeof QueryResult.infer;
