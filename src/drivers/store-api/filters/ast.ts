// The validated form of a docs/vector-tables.md#filters filter. Columns are referred to by their position in the
// generation's metadata schema, which is also how their SQL columns are named (`m_<position>`).

export type Scalar = string | number | boolean;

export type CompareOp = "eq" | "neq" | "gt" | "gte" | "lt" | "lte";
export type SetOp = "in" | "nin";

export type FilterNode =
  | { kind: "and"; items: FilterNode[] }
  | { kind: "or"; items: FilterNode[] }
  | { kind: "cmp"; column: number; op: CompareOp; value: Scalar }
  | { kind: "set"; column: number; op: SetOp; values: Scalar[] }
  | { kind: "exists"; column: number; value: boolean };

/** Limits of docs/vector-tables.md#filters: nesting of `$or` and the number of column conditions. */
export const FILTER_MAX_DEPTH = 5;
export const FILTER_MAX_CONDITIONS = 50;
/** Not in the contract: keeps `in`/`nin` lists well under SQLite's bound-parameter limit. */
export const FILTER_MAX_LIST = 1000;
