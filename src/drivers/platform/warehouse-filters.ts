// Compiles a validated docs/vector-tables.md#filters filter (the managed store's AST) to a
// warehouse boolean expression over a platform table's typed metadata columns, with `?` binds.
// Semantics match the managed store's predicate exactly (a property test checks): neq/nin also
// match null, `exists: false` matches null, comparisons and eq/in never match null. Every value is
// bound as text and cast in SQL, so no driver-side type guessing is involved.
import type { MetadataColumn, MetadataType } from "../vector-store/index.ts";
import type { FilterNode } from "./filters-pg.ts";
import { scalarText } from "./filters-pg.ts";
import { quoteIdent } from "./warehouse-schema.ts";

export type Bind = string | number | null;
type Scalar = string | number | boolean;

/** The cast of a bound (text) value to a column's type. */
export const WAREHOUSE_CAST: Record<MetadataType, string> = { keyword: "VARCHAR", integer: "NUMBER(38,0)", float: "FLOAT", boolean: "BOOLEAN" };

const COMPARE = { eq: "=", gt: ">", gte: ">=", lt: "<", lte: "<=" } as const;

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
  const bind = (value: Scalar, i: number, float: boolean): string => {
    binds.push(scalarText(value));
    return `?::${float ? "FLOAT" : WAREHOUSE_CAST[columns[i]!.type]}`;
  };
  const walk = (n: FilterNode): string => {
    switch (n.kind) {
      case "and":
        return n.items.length === 0 ? "TRUE" : `(${n.items.map(walk).join(" AND ")})`;
      case "or":
        return n.items.length === 0 ? "FALSE" : `(${n.items.map(walk).join(" OR ")})`;
      case "exists":
        return `(${column(n.column)} IS ${n.value ? "NOT NULL" : "NULL"})`;
      case "cmp": {
        const float = asFloat(n.column, [n.value]);
        const col = column(n.column, float);
        if (n.op === "neq") return `(${col} IS NULL OR ${col} <> ${bind(n.value, n.column, float)})`;
        return `(${col} ${COMPARE[n.op]} ${bind(n.value, n.column, float)})`;
      }
      case "set": {
        if (n.values.length === 0) return n.op === "in" ? "FALSE" : "TRUE";
        const float = asFloat(n.column, n.values);
        const list = n.values.map((v) => bind(v, n.column, float)).join(", ");
        const col = column(n.column, float);
        return n.op === "in" ? `(${col} IN (${list}))` : `(${col} IS NULL OR ${col} NOT IN (${list}))`;
      }
    }
  };
  const sql = node ? walk(node) : "TRUE";
  return sql.startsWith("(") ? sql : `(${sql})`;
}
