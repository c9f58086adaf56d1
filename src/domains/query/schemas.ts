import { type } from "arktype";
import { FILTER_JSON_SCHEMAS, type Filter } from "../../drivers/store-api/index.ts";
import { documentedAs } from "../../shared/validate.ts";
import { POSITION_PATTERNS } from "../vector-tables/synced-through.ts";

/**
 * The longest query text, in characters (UTF-16 code units, as JSON strings count them). A query
 * is a search phrase; this is already the whole input of the OpenAI models (8,191 tokens are
 * ~32,000 characters of English) and four times a Vertex model's, so past it a text would only be
 * cut before it is embedded. Refusing it costs nothing, where counting its tokens held the event
 * loop for seconds (docs/api.md#limits).
 */
export const QUERY_MAX_CHARS = 32_768;

/** The query text: any non-blank string up to QUERY_MAX_CHARS (it is embedded as is). */
const QueryText = type(`string <= ${QUERY_MAX_CHARS}`).narrow((s, ctx) => s.trim().length > 0 || ctx.mustBe("a non-empty string"));

/**
 * The filter language (docs/vector-tables.md#filters) is checked against the table's metadata columns by the
 * store's parser, which reports every problem with its path under `filters`; here it is only "an
 * object". Its type is the language's own, so TypeScript callers (tRPC, packages/client) get operators
 * and value kinds checked, and OpenAPI describes it as the `Filter` component.
 */
const Filters = documentedAs(type("Record<string, unknown>").as<Filter>(), { name: "Filter", schemas: FILTER_JSON_SCHEMAS }).or("null");

/**
 * `min_synced_through`: a WAL position or a time (docs/vector-tables.md#read-your-writes); which of
 * the two a table takes, and whether the time is a real one, the service checks against the table.
 */
const SyncPosition = type(POSITION_PATTERNS.lsn).or(POSITION_PATTERNS.time).describe('a PostgreSQL LSN such as "0/16B3748" or an ISO 8601 time such as "2026-01-01T12:00:00Z"');

/** The longest `wait_ms`: a wait is held in the server, and a client's own timeout is rarely longer. */
export const MAX_WAIT_MS = 30_000;

const queryFields = {
  query: QueryText,
  "limit?": "1 <= number.integer <= 100",
  "min_similarity_score?": "0 <= number <= 1 | null",
  "filters?": Filters,
  "min_synced_through?": SyncPosition,
  "wait_ms?": `0 <= number.integer <= ${MAX_WAIT_MS}`,
  /** Answer with `explain`: the path taken and its figures (docs/vector-tables.md#explain). */
  "explain?": "boolean",
  /** How to rank (docs/vector-tables.md#query-modes); given, results gain `keyword_score` and `rank_score`. */
  "mode?": "'vector' | 'keyword' | 'hybrid'",
  /** `hybrid` only: the vector ranking's weight in the fusion. */
  "vector_weight?": "0 <= number <= 1",
} as const;

/** POST /v1/vector-tables/{id}/query (docs/vector-tables.md#query). */
export const QueryRequest = type({ "+": "reject", ...queryFields });
export type QueryRequest = typeof QueryRequest.infer;

/** tRPC input: the path parameter and the `X-Environment-Id` header become fields. */
export const QueryInput = type({ "+": "reject", ...queryFields, vector_table_id: "string", "environment_id?": "string" });

export const DEFAULT_QUERY_LIMIT = 10;

const MetadataValue = type("string | number | boolean | null");

/**
 * How the search ran (docs/vector-tables.md#explain), answered only when asked. Null: a figure the
 * storage does not report (a platform's own planner; a built-in model embeds inside the search).
 */
export const QueryExplain = type({
  path: "'hnsw' | 'exact' | 'keyword' | 'hybrid' | 'platform'",
  estimated_matches: "number.integer | null",
  candidates_examined: "number.integer | null",
  expected_recall: "0 <= number <= 1 | null",
  embedding_ms: "number >= 0 | null",
  search_ms: "number >= 0",
});
export type QueryExplain = typeof QueryExplain.infer;

/** docs/vector-tables.md#query. */
export const QueryResult = type({
  results: type({
    id: "string",
    similarity_score: "number",
    /** With `mode`: the row's BM25 score for the query's words, null when none matched. */
    "keyword_score?": "number | null",
    /** With `mode`: the score the results are ordered by. */
    "rank_score?": "number",
    metadata: type({ "[string]": MetadataValue }),
    embedded_text: "string",
  }).array(),
  query: "string",
  model: "string",
  total_results: "number.integer",
  /** How far the table had applied its source: an LSN for a cdc table on PostgreSQL, else an ISO time; null until a fill or pass completed. */
  synced_through: "string | null",
  "explain?": QueryExplain,
});
export type QueryResult = typeof QueryResult.infer;
