// Compiles a validated docs/vector-tables.md#filters filter (the managed store's AST) to a
// warehouse boolean expression over a platform table's typed metadata columns, with `?` binds.
// Semantics match the managed store's predicate exactly (a property test checks): neq/nin also
// match null, `exists: false` matches null, comparisons and eq/in never match null. Every value is
// bound as text and cast in SQL, so no driver-side type guessing is involved.
import { filterSql, type MetadataColumn, type MetadataType } from "../store-api/index.ts";
import { type FilterNode, scalarText } from "./filters-pg.ts";
import { quoteIdent } from "./warehouse-schema.ts";

export type Bind = string | number | null;
type Scalar = string | number | boolean;

/** The cast of a bound (text) value to a column's type. */
export const WAREHOUSE_CAST: Record<MetadataType, string> = { keyword: "VARCHAR", integer: "NUMBER(38,0)", float: "FLOAT", boolean: "BOOLEAN" };

/**
 * `names` are the table's metadata column names (layoutOf); `binds` is the statement's bind list
 * so far, which this appends to. The answer is always parenthesised.
 */
export function compileWarehouse(node: FilterNode | null, columns: MetadataColumn[], names: string[], binds: Bind[], alias = "t"): string {
  // An integer column against a value that is no safe integer (2.5, 1e21): compare as doubles,
  // as the managed store's JS comparison does (exact for the column's safe integers), where a
  // NUMBER(38,0) cast would round or refuse the value.
  const asFloat = (i: number, values: Scalar[]) => columns[i]!.type === "integer" && values.some((v) => !Number.isSafeInteger(v));
  const column = (i: number, float = false) => `${alias}.${quoteIdent(names[i]!)}${float ? "::FLOAT" : ""}`;
  return filterSql(node, {
    column: (i, values) => column(i, asFloat(i, values)),
    bind: (value, i, values) => {
      binds.push(scalarText(value));
      return `?::${asFloat(i, values) ? "FLOAT" : WAREHOUSE_CAST[columns[i]!.type]}`;
    },
    true: "TRUE",
    false: "FALSE",
  });
}
