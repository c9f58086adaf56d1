// Compiles a validated filter to an in-memory predicate, used to post-filter HNSW candidates and
// to re-check hydrated rows. Semantics must match sql.ts exactly (see the property test).
import type { MetadataValue } from "../types.ts";
import type { FilterNode, Scalar } from "./ast.ts";

/** How to read column `index` of a row handle `R` (an object, or a row id into columnar arrays). */
export type ColumnAccess<R> = (column: number) => (row: R) => MetadataValue;

export type Predicate<R> = (row: R) => boolean;

export function compilePredicate<R>(node: FilterNode | null, access: ColumnAccess<R>): Predicate<R> {
  if (!node) return () => true;
  return compileNode(node, access);
}

function compileNode<R>(n: FilterNode, access: ColumnAccess<R>): Predicate<R> {
  switch (n.kind) {
    case "and": {
      const items = n.items.map((i) => compileNode(i, access));
      return (row) => items.every((p) => p(row));
    }
    case "or": {
      const items = n.items.map((i) => compileNode(i, access));
      return (row) => items.some((p) => p(row));
    }
    case "exists": {
      const get = access(n.column);
      return n.value ? (row) => get(row) !== null : (row) => get(row) === null;
    }
    case "set": {
      const get = access(n.column);
      const values = new Set<Scalar>(n.values);
      if (n.op === "in") return (row) => { const v = get(row); return v !== null && values.has(v); };
      return (row) => { const v = get(row); return v === null || !values.has(v); };
    }
    case "cmp":
      return compileCompare(n.op, n.value, access(n.column));
  }
}

function compileCompare<R>(op: string, value: Scalar, get: (row: R) => MetadataValue): Predicate<R> {
  switch (op) {
    case "eq":
      return (row) => get(row) === value;
    case "neq":
      return (row) => { const v = get(row); return v === null || v !== value; };
    case "gt":
      return (row) => { const v = get(row); return v !== null && v > value; };
    case "gte":
      return (row) => { const v = get(row); return v !== null && v >= value; };
    case "lt":
      return (row) => { const v = get(row); return v !== null && v < value; };
    default:
      return (row) => { const v = get(row); return v !== null && v <= value; };
  }
}
