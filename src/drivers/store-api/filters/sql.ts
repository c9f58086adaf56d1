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

/**
 * How one SQL dialect spells a filter's columns and bound values; the null semantics above live
 * here alone, for libSQL (compileSql), pgvector (platform/filters-pg.ts) and the warehouse
 * (platform/warehouse-filters.ts). `values`: every value the column is compared with in this
 * node (a dialect may cast the column for them); `range`: an ordering comparison (gt/gte/lt/lte).
 */
export interface SqlDialect {
  column(index: number, values: Scalar[]): string;
  bind(value: Scalar, index: number, values: Scalar[], range: boolean): string;
  /**
   * An `in` list bound as one value (`column` is the SQL of the column): the membership test and
   * its negation for a non-null column. The statement's text then does not grow with the list,
   * and filters of one shape share one statement whatever their lists (a cached statement of a
   * 1,000-value list held ~100 KB). Absent: `IN (v1, v2, …)`, one bound value each.
   */
  list?(column: string, values: Scalar[], index: number): { in: string; notIn: string };
  readonly true: string;
  readonly false: string;
}

/** A filter (or none: every row) as a parenthesised SQL boolean expression. */
export function filterSql(node: FilterNode | null, d: SqlDialect): string {
  const walk = (n: FilterNode): string => {
    switch (n.kind) {
      case "and":
        return n.items.length === 0 ? d.true : `(${n.items.map(walk).join(" AND ")})`;
      case "or":
        return n.items.length === 0 ? d.false : `(${n.items.map(walk).join(" OR ")})`;
      case "exists":
        return `(${d.column(n.column, [])} IS ${n.value ? "NOT NULL" : "NULL"})`;
      case "cmp": {
        const col = d.column(n.column, [n.value]);
        const value = d.bind(n.value, n.column, [n.value], n.op !== "eq" && n.op !== "neq");
        return n.op === "neq" ? `(${col} IS NULL OR ${col} <> ${value})` : `(${col} ${COMPARE_SQL[n.op]} ${value})`;
      }
      case "set": {
        if (n.values.length === 0) return n.op === "in" ? d.false : d.true;
        const col = d.column(n.column, n.values);
        if (d.list) {
          const list = d.list(col, n.values, n.column);
          return n.op === "in" ? `(${list.in})` : `(${col} IS NULL OR ${list.notIn})`;
        }
        const list = n.values.map((v) => d.bind(v, n.column, n.values, false)).join(", ");
        return n.op === "in" ? `(${col} IN (${list}))` : `(${col} IS NULL OR ${col} NOT IN (${list}))`;
      }
    }
  };
  const sql = node ? walk(node) : d.true;
  return sql.startsWith("(") ? sql : `(${sql})`;
}

/** `alias` qualifies the columns (e.g. "r" → `r.m_0`); the result is always parenthesised. */
export function compileSql(node: FilterNode | null, columns: MetadataColumn[], alias = ""): SqlWhere {
  const args: InValue[] = [];
  const prefix = alias ? `${alias}.` : "";
  const sql = filterSql(node, {
    column: (index) => prefix + metadataColumnName(index),
    // Integers and booleans go as BigInt: the libSQL client sends JS numbers as REAL.
    bind: (value, index) => {
      const type = columns[index]?.type;
      if (typeof value === "boolean") args.push(value ? 1n : 0n);
      else if (typeof value === "number" && type === "integer" && Number.isSafeInteger(value)) args.push(BigInt(value));
      else args.push(value);
      return "?";
    },
    // json_each reads numbers as INTEGER or REAL and strings as TEXT, which compare with the
    // typed columns as the separate values did; booleans are stored as 1 and 0.
    list: (column, values) => {
      args.push(JSON.stringify(values.map((v) => (typeof v === "boolean" ? Number(v) : v))));
      const list = "(SELECT value FROM json_each(?))";
      return { in: `${column} IN ${list}`, notIn: `${column} NOT IN ${list}` };
    },
    true: "1",
    false: "0",
  });
  return { sql, args };
}
