// Random rows and filters (docs/vector-tables.md#filters) over SPEC's metadata columns, for the property tests that
// check each filter compiler (SQLite, Postgres) against the in-memory predicate.
import fc from "fast-check";
import { compilePredicate, parseFilter, type Metadata, type MetadataColumn } from "../../../src/drivers/store-api/index.ts";

export type ValuePools = {
  keyword: fc.Arbitrary<string>;
  float: fc.Arbitrary<number>;
  /** Values of the integer column. */
  integer: fc.Arbitrary<number>;
  /** Bounds given to gt/gte/lt/lte. */
  bound: fc.Arbitrary<number>;
  /** Values compared with the float column; default float or integer values. */
  floatOperand?: fc.Arbitrary<number>;
};

type Col = "category" | "price" | "stock" | "active";

export function filterArbitraries(pools: ValuePools) {
  const values: Record<Col, fc.Arbitrary<unknown>> = { category: pools.keyword, price: pools.floatOperand ?? fc.oneof(pools.float, pools.integer), stock: pools.integer, active: fc.boolean() };

  const row: fc.Arbitrary<Metadata> = fc.record({
    category: fc.option(pools.keyword, { nil: null }),
    price: fc.option(pools.float, { nil: null }),
    stock: fc.option(pools.integer, { nil: null }),
    active: fc.option(fc.boolean(), { nil: null }),
  });

  function condition(col: Col): fc.Arbitrary<unknown> {
    const v = values[col];
    const ops: fc.Arbitrary<unknown>[] = [
      v,
      fc.array(v, { maxLength: 3 }),
      fc.record({ eq: v }),
      fc.record({ neq: v }),
      fc.record({ in: fc.array(v, { maxLength: 3 }) }),
      fc.record({ nin: fc.array(v, { maxLength: 3 }) }),
      fc.record({ exists: fc.boolean() }),
    ];
    if (col === "price" || col === "stock") {
      const n = pools.bound;
      ops.push(fc.record({ gt: n }), fc.record({ gte: n }), fc.record({ lt: n, gte: n }), fc.record({ lte: n }));
    }
    return fc.oneof(...ops);
  }

  const filter = fc.letrec<{ obj: Record<string, unknown> }>((tie) => ({
    obj: fc
      .record(
        {
          category: condition("category"),
          price: condition("price"),
          stock: condition("stock"),
          active: condition("active"),
          $or: fc.array(tie("obj"), { minLength: 1, maxLength: 3 }),
        },
        { requiredKeys: [] },
      )
      .filter((o) => JSON.stringify(o).split("{").length <= 40),
  })).obj;

  return { row, filter };
}

/**
 * The value pools of the SQL compilers' property tests (Postgres, the warehouse): floats at the
 * edges, integers past 2^53 and fractional or huge bounds against the integer column, plus
 * `keywords` — strings a dialect's quoting must survive.
 */
export function sqlEdgeArbitraries(keywords: string[]) {
  const float = fc.constantFrom(-1.5, 0, 0.1, 1, 2, 2.5, 100, -0, 1e-300, 1.7976931348623157e308);
  const integer = fc.integer({ min: -3, max: 3 });
  const bigInteger = fc.constantFrom(Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER);
  const bound = fc.oneof(float, integer, bigInteger, fc.constantFrom(2.0000000000000004, 1e21, -1e21, 0.5, -2.5));
  return filterArbitraries({ keyword: fc.constantFrom(...keywords), float, integer: fc.oneof(integer, bigInteger), bound, floatOperand: fc.oneof(float, integer) });
}

/** The parsed filter and the indexes of the rows the in-memory predicate keeps; null when the filter is refused (e.g. nested deeper than 5). */
export function expectedMatches(filter: unknown, cols: MetadataColumn[], rows: Metadata[]) {
  let node;
  try {
    node = parseFilter(filter, cols);
  } catch {
    return null;
  }
  const pred = compilePredicate<Metadata>(node, (c) => (m) => m[cols[c]!.name] ?? null);
  return { node, expected: rows.flatMap((m, i) => (pred(m) ? [i] : [])) };
}
