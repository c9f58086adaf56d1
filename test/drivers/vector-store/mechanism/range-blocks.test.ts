// Range blocks (range-blocks.ts): a numeric column's rows in value order, their codes beside them,
// for the exact path of a range filter. The run a filter selects must hold exactly its rows; the
// store must answer exactly through it, and after any write (the block is then stale, and made
// again only once writes have paused) exactly as before.
import { describe, expect, test } from "bun:test";
import { parseFilter } from "../../../../src/drivers/vector-store/filters/index.ts";
import { Mirror } from "../../../../src/drivers/vector-store/mirror.ts";
import { intervalOf, runOf } from "../../../../src/drivers/vector-store/range-blocks.ts";
import type { GenerationSpec, Metadata, UpsertRow } from "../../../../src/drivers/vector-store/index.ts";
import { clusteredVectors, makeWorld, pks, referenceTopK } from "../helpers.ts";

const SPEC: GenerationSpec = {
  dimensions: 64,
  numericPk: true,
  metadata: [
    { name: "price", type: "float" },
    { name: "stock", type: "integer" },
    { name: "category", type: "keyword" },
  ],
};

describe("intervals and runs", () => {
  const node = (filter: unknown) => parseFilter(filter, SPEC.metadata)!;

  test("a comparison with a number, or an `and` of them on one numeric column, is an interval; nothing else", () => {
    expect(intervalOf(node({ price: { lt: 5 } }))).toEqual({ column: 0, lo: -Infinity, loOpen: false, hi: 5, hiOpen: true });
    expect(intervalOf(node({ price: { gte: 2, lte: 7 } }))).toEqual({ column: 0, lo: 2, loOpen: false, hi: 7, hiOpen: false });
    expect(intervalOf(node({ stock: { gt: 1, gte: 1, lt: 9, lte: 9 } }))).toEqual({ column: 1, lo: 1, loOpen: true, hi: 9, hiOpen: true });
    expect(intervalOf(node({ stock: 4 }))).toEqual({ column: 1, lo: 4, loOpen: false, hi: 4, hiOpen: false });
    for (const other of [{ price: { neq: 3 } }, { price: { lt: 5 }, stock: { lt: 3 } }, { $or: [{ price: { lt: 1 } }, { price: { gt: 9 } }] }, { category: "a" }, { price: { exists: true } }]) {
      expect(intervalOf(node(other))).toBeNull();
    }
  });

  test("a run holds exactly the rows of its interval, at the edges and among equal values", () => {
    const values = Float64Array.from([1, 2, 2, 2, 3, 5, 5, 8]);
    const run = (filter: unknown) => runOf(values, intervalOf(node(filter))!);
    expect(run({ price: { lt: 2 } })).toEqual({ from: 0, to: 1 });
    expect(run({ price: { lte: 2 } })).toEqual({ from: 0, to: 4 });
    expect(run({ price: { gt: 2 } })).toEqual({ from: 4, to: 8 });
    expect(run({ price: { gte: 5, lt: 8 } })).toEqual({ from: 5, to: 7 });
    expect(run({ price: 4 })).toEqual({ from: 5, to: 5 });
    expect(run({ price: { gt: 8 } })).toEqual({ from: 8, to: 8 });
    const empty = run({ price: { gt: 6, lt: 2 } }); // nothing matches
    expect(empty.to - empty.from).toBe(0);
  });

  test("a block is made once writes pause, holds the rows in value order, and is stale after any write", () => {
    const mirror = new Mirror(SPEC, { rangeQuietMs: 0 });
    const v = new Float32Array(64).fill(1);
    [5, null, 1, 3, 1].forEach((price, rid) => mirror.set(rid, v, [price, rid, "a"], String(rid), ""));
    const block = mirror.blocks.range(0)!;
    expect([...block.values]).toEqual([1, 1, 3, 5]);
    expect([...block.rids]).toEqual([2, 4, 3, 0]);
    expect(mirror.blocks.range(0)).toBe(block);
    expect(mirror.blocks.range(2)).toBeNull(); // a keyword column
    mirror.setMetadata(4, [9, 4, "a"]);
    expect(mirror.blocks.isCurrent(block)).toBe(false);
    expect([...mirror.blocks.range(0)!.rids]).toEqual([2, 3, 0, 4]);
    const waiting = new Mirror(SPEC, { rangeQuietMs: 60_000 });
    waiting.set(0, v, [1, 1, "a"], "0", "");
    expect(waiting.blocks.range(0)).toBeNull(); // written just now
  });
});

function rowsOf(vectors: Float32Array[], offset = 0): UpsertRow[] {
  return vectors.map((vector, i) => {
    const id = i + offset;
    // Prices with many ties (200 distinct values), some null; stock a small integer.
    const metadata: Metadata = { price: id % 17 === 0 ? null : (id * 7919) % 200, stock: id % 23, category: "a" };
    return { pk: String(id), textHash: `t${id}`, metaHash: `m${id}`, text: `row ${id}`, metadata, vector };
  });
}

const FILTERS: [unknown, (m: Metadata) => boolean][] = [
  [{ price: { lt: 10 } }, (m) => m.price !== null && (m.price as number) < 10],
  [{ price: { gte: 50, lte: 60 } }, (m) => m.price !== null && (m.price as number) >= 50 && (m.price as number) <= 60],
  [{ price: { gt: 150 } }, (m) => m.price !== null && (m.price as number) > 150],
  [{ stock: 7 }, (m) => m.stock === 7],
];

describe.each([["f32", {}], ["compact", { floatMirrorBytes: 0 }]] as const)("%s mirror", (_, memory) => {
  test("range filters answer exactly through the block, after writes and after a restart", async () => {
    // exactCapScale: every filter takes the exact path (which scan the planner picks is planner.test.ts's).
    await using w = await makeWorld({ ...memory, exactCapScale: 1e9, rangeQuietMs: 0 });
    let store = await w.open();
    await store.createCollection("vt_r", SPEC);
    const rows = new Map(rowsOf(clusteredVectors(3_000, 64, 3)).map((r) => [r.pk, r]));
    await store.upsert("vt_r", [...rows.values()]);
    await store.whenReady("vt_r");
    const queries = clusteredVectors(5, 64, 4);
    const check = async () => {
      for (const q of queries) {
        for (const [filter, keep] of FILTERS) {
          const found = await store.search("vt_r", { vector: q, k: 10, filter });
          expect(found.path).toBe("exact-memory");
          expect(pks(found.hits)).toEqual(referenceTopK([...rows.values()], q, 10, keep));
        }
      }
    };
    const before = (await store.stats("vt_r")).memoryBytes;
    await check();
    // The price and stock blocks: 3,000 rows × (64 + 12) B each, less price's nulls.
    expect((await store.stats("vt_r")).memoryBytes - before).toBeGreaterThanOrEqual(2 * 2_800 * 76);
    const write = async (changed: UpsertRow[]) => {
      for (const r of changed) rows.set(r.pk, r);
      await store.upsert("vt_r", changed);
      await check();
    };
    // A row inside `price < 10` takes the first query's vector; another moves into the range.
    const inside = [...rows.values()].find((r) => r.metadata.price === 3)!;
    await write([{ ...inside, textHash: "moved", vector: queries[0]! }]);
    expect((await store.search("vt_r", { vector: queries[0]!, k: 1, filter: { price: { lt: 10 } } })).hits[0]!.pk).toBe(inside.pk);
    await write([{ ...rows.get("1")!, metaHash: "moved", metadata: { price: 0, stock: 7, category: "a" } }, ...rowsOf([queries[1]!], 9_000)]);
    await store.delete("vt_r", [inside.pk]);
    rows.delete(inside.pk);
    await check();
    await store.close();
    store = await w.open();
    await store.whenReady("vt_r");
    await check();
  });
});

test("while writes have not paused, range filters take the paths they took before: no block is made", async () => {
  await using w = await makeWorld({ exactCapScale: 1e9, rangeQuietMs: 60_000 });
  const store = await w.open();
  await store.createCollection("vt_r", SPEC);
  const rows = rowsOf(clusteredVectors(2_000, 64, 5));
  await store.upsert("vt_r", rows);
  await store.whenReady("vt_r");
  const before = (await store.stats("vt_r")).memoryBytes;
  const q = clusteredVectors(1, 64, 6)[0]!;
  const found = await store.search("vt_r", { vector: q, k: 10, filter: { price: { lt: 10 } } });
  expect(pks(found.hits)).toEqual(referenceTopK(rows, q, 10, (m) => m.price !== null && (m.price as number) < 10));
  expect((await store.stats("vt_r")).memoryBytes).toBe(before);
});
