// The managed vector store (docs/architecture.md#stores): durable rows in libSQL, a usearch HNSW index
// per collection generation, exact filtering, and a planner between exact and HNSW search.
export { VectorStore } from "./store.ts";
export { DEFAULT_INDEX_PARAMS, type VectorStoreOptions } from "./options.ts";
export { FilterError, VectorStoreError, type FilterIssue, type VectorStoreErrorCode } from "./errors.ts";
export { parseFilter, compileSql, compilePredicate, filterSql, type SqlDialect } from "./filters/index.ts";
export { FILTER_JSON_SCHEMAS } from "./filters/json-schema.ts";
export type { Filter } from "./filters/language.ts";
export type * from "./types.ts";
export { checkedMetadata } from "./rows.ts";
export { documentTerms, queryWords, MAX_QUERY_WORDS } from "./words.ts";
export { DEFAULT_VECTOR_WEIGHT, fuseRankings, hybridDepth, unscored, withLateScores } from "./fusion.ts";
export { comparePk } from "./pk-order.ts";
export { graphAddon, openGraph, usearchVersion } from "./graph-binding.ts";
