// What every vector store takes and answers (src/drivers/store-api/README.md): the managed store
// (vector-store/) and the platform stores (platform/) serve it alike, and the service speaks it.
export type * from "./types.ts";
export * from "./errors.ts";
export { checkedMetadata } from "./metadata.ts";
export * from "./filters/ast.ts";
export * from "./filters/parse.ts";
export * from "./filters/sql.ts";
export * from "./filters/predicate.ts";
export { FILTER_JSON_SCHEMAS } from "./filters/json-schema.ts";
export type { Filter } from "./filters/language.ts";
export * from "./words.ts";
export * from "./fusion.ts";
export * from "./pk-order.ts";
