// The filter module: parse + validate (parse.ts), compile to SQL (sql.ts) and to an in-memory
// predicate (predicate.ts). Both compilations agree on every filter and row, nulls included.
export type { FilterNode, Scalar } from "./ast.ts";
export { FILTER_MAX_CONDITIONS, FILTER_MAX_DEPTH, FILTER_MAX_LIST } from "./ast.ts";
export { parseFilter } from "./parse.ts";
export { compileSql, filterSql, metadataColumnName, type SqlDialect, type SqlWhere } from "./sql.ts";
export { compilePredicate, type ColumnAccess, type Predicate } from "./predicate.ts";
