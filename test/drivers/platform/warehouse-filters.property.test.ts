// Property: for any valid docs/vector-tables.md#filters filter and any rows (nulls included), a
// warehouse store search filtered by it (compiled by warehouse-filters.ts, run by the warehouse
// test server through the real SDK) returns exactly the rows the managed store's in-memory
// predicate keeps, so platform and managed modes answer the same filters the same way.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import fc from "fast-check";
import type { GenerationSpec } from "../../../src/drivers/store-api/index.ts";
import { expectedMatches, sqlEdgeArbitraries } from "../vector-store/filter-arbitraries.ts";
import { SPEC } from "../vector-store/helpers.ts";
import { warehouseWorld, type WarehouseWorld } from "./warehouse-world.ts";

setDefaultTimeout(60_000);

const cols = SPEC.metadata;
const spec: GenerationSpec = { ...SPEC, dimensions: 2 };
let world: WarehouseWorld;
let ref: string;
beforeAll(async () => {
  world = await warehouseWorld();
  ref = world.ref("filters1", "property");
  await world.store.ensureTable(ref, spec);
});
afterAll(async () => {
  await world?.[Symbol.asyncDispose]();
});

const { row, filter } = sqlEdgeArbitraries(["a", "b", "B", "c", "", "a b", "ä", "😀", "it's", "back\\slash"]);

test("the warehouse compilation and the managed store's predicate agree on random filters and rows", async () => {
  let previous: string[] = [];
  await fc.assert(
    fc.asyncProperty(fc.array(row, { minLength: 1, maxLength: 20 }), filter, async (rows, f) => {
      const matches = expectedMatches(f, cols, rows);
      if (!matches) return true; // refused: nothing to compare
      const expected = matches.expected.map(String);
      await world.store.delete(ref, previous);
      previous = rows.map((_, i) => String(i));
      await world.store.upsert(ref, rows.map((metadata, i) => ({ pk: String(i), textHash: "t", metaHash: "m", text: `row ${i}`, metadata, vector: Float32Array.of(1, 0) })));
      const { hits } = await world.store.search(ref, { vector: Float32Array.of(1, 0), k: 100, filter: f });
      expect(hits.map((h) => h.pk)).toEqual(expected);
    }),
    { numRuns: 200, seed: 17 },
  );
});

test("fractional and huge bounds on an integer column compare as the predicate does, not rounded to the column's type", async () => {
  const eref = world.ref("filters2", "bounds");
  await world.store.ensureTable(eref, spec);
  const stocks = [-3, -2, -1, 0, 1, 2, 3, Number.MAX_SAFE_INTEGER];
  await world.store.upsert(eref, stocks.map((stock, i) => ({ pk: String(i), textHash: "t", metaHash: "m", text: "x", metadata: { stock }, vector: Float32Array.of(1, 0) })));
  const cases: [unknown, number[]][] = [
    [{ stock: { gt: 2.5 } }, [3, Number.MAX_SAFE_INTEGER]],
    [{ stock: { gte: 2.0000000000000004 } }, [3, Number.MAX_SAFE_INTEGER]],
    [{ stock: { lt: -2.5 } }, [-3]],
    [{ stock: { lte: 0.5 } }, [-3, -2, -1, 0]],
    [{ stock: { lt: 1e21 } }, stocks],
    [{ stock: { gt: -1e21, lt: -0.5 } }, [-3, -2, -1]],
  ];
  for (const [filter, want] of cases) {
    const { hits } = await world.store.search(eref, { vector: Float32Array.of(1, 0), k: 100, filter });
    expect(hits.map((h) => h.metadata.stock), JSON.stringify(filter)).toEqual(want);
  }
});
