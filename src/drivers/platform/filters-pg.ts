// Compiles a validated docs/vector-tables.md#filters filter (the managed store's AST, from `parseFilter`) to a
// Postgres boolean expression over a platform table's typed metadata columns, with bind
// parameters. Semantics match the managed store's predicate exactly (a property test checks):
// neq/nin also match null, `exists: false` matches null, comparisons and eq/in never match null.
import { filterSql, type MetadataColumn, type MetadataType, type parseFilter } from "../store-api/index.ts";

/** The validated filter AST (the managed store's public API exports the parser, not the type). */
export type FilterNode = NonNullable<ReturnType<typeof parseFilter>>;
type Scalar = string | number | boolean;

export interface PgWhere {
  sql: string;
  /** Bound as text; each placeholder casts to its column's type. */
  params: (string | null)[];
}

/** A SQL column named by its metadata column's index, `m_<i>` (the default naming of `compilePg`). */
export function metadataColumn(index: number): string {
  return `m_${index}`;
}

/**
 * Postgres type of each metadata type (CONTRACT 12). Equality on `text` under any deterministic
 * collation is byte equality, which is all a keyword filter compares.
 */
export const PG_TYPES: Record<MetadataType, string> = {
  keyword: "text",
  integer: "bigint",
  float: "double precision",
  boolean: "boolean",
};

/** The cast of a bound (text) parameter to a column's type. */
export const PG_CAST: Record<MetadataType, string> = { keyword: "text", integer: "bigint", float: "float8", boolean: "boolean" };

/**
 * `$n` read as text, then cast. Never `$n::type` alone: postgres.js would then serialize the
 * value by the server's inferred type (its boolean serializer turns the string "true" into f).
 */
export function placeholder(n: number, cast: string): string {
  return `$${n}::text::${cast}`;
}

/** JS's shortest round-trip text for numbers, so a float8 parses back to the same double. */
export function scalarText(value: Scalar): string {
  return typeof value === "boolean" ? (value ? "true" : "false") : String(value);
}

/**
 * `params` is the statement's parameter list so far (placeholders continue after it); the
 * returned `sql` is always parenthesised. `column` gives the SQL of metadata column `i`.
 */
export function compilePg(node: FilterNode | null, columns: MetadataColumn[], params: (string | null)[], column: (index: number) => string = metadataColumn): string {
  return filterSql(node, {
    column,
    bind: (value, index, _values, range) => {
      params.push(scalarText(value));
      const type = columns[index]!.type;
      // A range bound on an integer column may be fractional or past int64: compare as numeric
      // (exact), and as bigint when it is a safe integer so the column's index still applies.
      const cast = range && type === "integer" && !Number.isSafeInteger(value) ? "numeric" : PG_CAST[type];
      return placeholder(params.length, cast);
    },
    // One array parameter per list (`= ANY`), read as text, then cast element by element: the
    // planner folds it to a constant and estimates it value by value, as it did `IN (…)`.
    list: (col, values, index) => {
      params.push(arrayText(values));
      const array = placeholder(params.length, "text[]") + `::${PG_CAST[columns[index]!.type]}[]`;
      return { in: `${col} = ANY(${array})`, notIn: `${col} <> ALL(${array})` };
    },
    true: "TRUE",
    false: "FALSE",
  });
}

/** A Postgres array literal of the values' texts, each quoted, `"` and `\` escaped with `\`: `{"a","say \"hi\""}`. */
export function arrayText(values: Scalar[]): string {
  return `{${values.map((v) => `"${scalarText(v).replace(/[\\"]/g, "\\$&")}"`).join(",")}}`;
}
