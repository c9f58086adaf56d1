import { describe, expect, test } from "bun:test";
import { compilePredicate, compileSql, FilterError, parseFilter, type Metadata } from "../../../src/drivers/store-api/index.ts";
import { SPEC } from "./helpers.ts";

const cols = SPEC.metadata;

function issues(filter: unknown) {
  try {
    parseFilter(filter, cols);
  } catch (e) {
    expect(e).toBeInstanceOf(FilterError);
    return (e as FilterError).details;
  }
  throw new Error("expected a FilterError");
}

function matches(filter: unknown, row: Metadata): boolean {
  const node = parseFilter(filter, cols);
  return compilePredicate<Metadata>(node, (c) => (m) => m[cols[c]!.name] ?? null)(row);
}

const NULLS: Metadata = { category: null, price: null, stock: null, active: null };

describe("happy", () => {
  test("absent, null and {} mean no filter", () => {
    expect(parseFilter(undefined, cols)).toBeNull();
    expect(parseFilter(null, cols)).toBeNull();
    expect(parseFilter({}, cols)).toBeNull();
  });

  test("shorthand scalar is eq and shorthand array is in", () => {
    expect(parseFilter({ category: "books" }, cols)).toEqual({ kind: "cmp", column: 0, op: "eq", value: "books" });
    expect(parseFilter({ stock: [1, 2] }, cols)).toEqual({ kind: "set", column: 2, op: "in", values: [1, 2] });
  });

  test("keys and operators AND together; $or at any level", () => {
    const f = { category: "books", price: { gte: 10, lt: 20 }, $or: [{ active: true }, { $or: [{ stock: { gt: 5 } }] }] };
    expect(matches(f, { category: "books", price: 15, stock: 9, active: false })).toBe(true);
    expect(matches(f, { category: "books", price: 15, stock: 1, active: false })).toBe(false);
    expect(matches(f, { category: "books", price: 25, stock: 9, active: true })).toBe(false);
  });

  test("neq and nin match null; exists:false matches null; comparisons never do", () => {
    expect(matches({ category: { neq: "books" } }, NULLS)).toBe(true);
    expect(matches({ category: { nin: ["books"] } }, NULLS)).toBe(true);
    expect(matches({ category: { exists: false } }, NULLS)).toBe(true);
    expect(matches({ category: { exists: true } }, NULLS)).toBe(false);
    expect(matches({ price: { lt: 1e9 } }, NULLS)).toBe(false);
    expect(matches({ category: { in: ["books"] } }, NULLS)).toBe(false);
  });

  test("an integer value is fine on a float column; ranges accept fractions on integer columns", () => {
    expect(matches({ price: 10 }, { ...NULLS, price: 10 })).toBe(true);
    expect(matches({ stock: { gt: 2.5 } }, { ...NULLS, stock: 3 })).toBe(true);
  });

  test("empty in matches nothing, empty nin matches everything", () => {
    expect(matches({ stock: { in: [] } }, { ...NULLS, stock: 1 })).toBe(false);
    expect(matches({ stock: { nin: [] } }, NULLS)).toBe(true);
  });

  test("SQL: values are bound, never inlined; integers and booleans as BigInt", () => {
    const where = compileSql(parseFilter({ category: "x'; DROP TABLE t; --", stock: 3, active: true }, cols), cols);
    expect(where.sql).toBe("((m_0 = ?) AND (m_2 = ?) AND (m_3 = ?))");
    expect(where.args).toEqual(["x'; DROP TABLE t; --", 3n, 1n]);
    expect(compileSql(parseFilter({ category: { neq: "a" } }, cols), cols, "r").sql).toBe("(r.m_0 IS NULL OR r.m_0 <> ?)");
  });
});

describe("errors", () => {
  test("unknown column and operator, with paths", () => {
    expect(issues({ colour: "red" })).toEqual([{ path: "filters.colour", message: 'unknown filter column "colour"' }]);
    expect(issues({ price: { near: 3 } })[0]!.path).toBe("filters.price.near");
  });

  test("eq null is refused (use exists), also as shorthand and inside in", () => {
    expect(issues({ category: { eq: null } })[0]!.message).toContain("exists");
    expect(issues({ category: null })[0]!.path).toBe("filters.category");
    expect(issues({ category: { in: ["a", null] } })[0]!.path).toBe("filters.category.in[1]");
  });

  test("range operators only on integer and float columns", () => {
    expect(issues({ category: { gt: "a" } })[0]!.message).toContain("only to integer and float");
    expect(issues({ active: { lte: 1 } })[0]!.path).toBe("filters.active.lte");
  });

  test("value types must match the column", () => {
    expect(issues({ stock: 2.5 })[0]!.message).toContain("integer");
    expect(issues({ category: 3 })[0]!.message).toContain("string");
    expect(issues({ active: "true" })[0]!.message).toContain("true or false");
    expect(issues({ price: { gt: "5" } })[0]!.message).toBe("expected a number");
    expect(issues({ active: { exists: 1 } })[0]!.message).toContain("exists");
  });

  test("$or must be a non-empty array of objects", () => {
    expect(issues({ $or: [] })[0]!.path).toBe("filters.$or");
    expect(issues({ $or: {} })[0]!.path).toBe("filters.$or");
    expect(issues({ $or: [1] })[0]!.path).toBe("filters.$or[0]");
    expect(issues([])[0]!.message).toContain("object");
  });

  test("depth 5 is fine, depth 6 is refused", () => {
    const nest = (d: number): unknown => (d === 1 ? { stock: 1 } : { $or: [nest(d - 1)] });
    expect(() => parseFilter(nest(5), cols)).not.toThrow();
    expect(issues(nest(6))[0]!.message).toContain("at most 5 levels");
  });

  test("50 conditions are fine, 51 are refused", () => {
    const branches = (n: number) => ({ $or: Array.from({ length: n }, (_, i) => ({ stock: i })) });
    expect(() => parseFilter(branches(50), cols)).not.toThrow();
    expect(issues(branches(51))).toEqual([{ path: "filters", message: "a filter may hold at most 50 conditions (found 51)" }]);
  });

  test("every problem is reported at once", () => {
    expect(issues({ colour: 1, price: { gt: "x" }, active: { eq: null } }).map((i) => i.path)).toEqual([
      "filters.colour",
      "filters.price.gt",
      "filters.active.eq",
    ]);
  });
});
