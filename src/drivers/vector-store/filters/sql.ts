// Compiles a validated filter to a SQL boolean expression over the typed columns `m_<i>`.
// Null semantics follow docs/vector-tables.md#filters and must match predicate.ts exactly (a property test checks):
// neq/nin also match null; comparisons and eq/in never match null.
import type { InValue } from "@libsql/client";
import type { MetadataColumn } from "../types.ts";
import type { FilterNode, Scalar } from "./ast.ts";

export interface SqlWhere {
  sql: string;
  args: InValue[];
}

/** The SQL column holding metadata column `index` of a generation. */
export function metadataColumnName(index: number): string {
  return `m_${index}`;
}

const COMPARE_SQL = { eq: "=", gt: ">", gte: ">=", lt: "<", lte: "<=" } as const;

/** `alias` qualifies the columns (e.g. "r" → `r.m_0`); the result is always parenthesised. */
export function compileSql(node: FilterNode | null, columns: MetadataColumn[], alias = ""): SqlWhere {
  const args: InValue[] = [];
  const prefix = alias ? `${alias}.` : "";
  // Integers and booleans go as BigInt: the libSQL client sends JS numbers as REAL.
  const bind = (value: Scalar, column: number): string => {
    const type = columns[column]?.type;
    if (typeof value === "boolean") args.push(value ? 1n : 0n);
    else if (typeof value === "number" && type === "integer" && Number.isSafeInteger(value)) args.push(BigInt(value));
    else args.push(value);
    return "?";
  };
  const walk = (n: FilterNode): string => {
    switch (n.kind) {
      case "and":
        return n.items.length === 0 ? "1" : `(${n.items.map(walk).join(" AND ")})`;
      case "or":
        return n.items.length === 0 ? "0" : `(${n.items.map(walk).join(" OR ")})`;
      case "exists":
        return `(${prefix}${metadataColumnName(n.column)} IS ${n.value ? "NOT NULL" : "NULL"})`;
      case "cmp": {
        const col = prefix + metadataColumnName(n.column);
        if (n.op === "neq") return `(${col} IS NULL OR ${col} <> ${bind(n.value, n.column)})`;
        return `(${col} ${COMPARE_SQL[n.op]} ${bind(n.value, n.column)})`;
      }
      case "set": {
        const col = prefix + metadataColumnName(n.column);
        if (n.values.length === 0) return n.op === "in" ? "0" : "1";
        const list = n.values.map((v) => bind(v, n.column)).join(", ");
        return n.op === "in" ? `(${col} IN (${list}))` : `(${col} IS NULL OR ${col} NOT IN (${list}))`;
      }
    }
  };
  const sql = node ? walk(node) : "1";
  return { sql: sql.startsWith("(") ? sql : `(${sql})`, args };
}
