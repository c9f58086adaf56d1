// Column orders (column-order.ts): a column's rows in value order, their codes beside them, for
// the exact path of a keyword `=` / `in` or a numeric range. The runs a filter selects must hold
// exactly its rows; the store must answer exactly through them, and after any write (the order is
// then stale, and made again only once writes have paused) exactly as before.
import { describe, expect, test } from "bun:test";
import { type GenerationSpec, type Metadata, parseFilter, type UpsertRow } from "../../../../src/drivers/store-api/index.ts";
import { Mirror } from "../../../../src/drivers/vector-store/mirror.ts";
import fc from "fast-check";
import { makeOrder, runOf, spansOf } from "../../../../src/drivers/vector-store/column-order.ts";
import { clusteredVectors, makeWorld, pks, referenceTopK } from "../helpers.ts";

const SPEC: GenerationSpec = {
  dimensions: 64,
  numericPk: true,
  metadata: [
    { name: "price", type: "float" },
    { name: "stock", type: "integer" },
    { name: "category", type: "keyword" },
    { name: "sale", type: "boolean" },
  ],
};

describe("spans and runs", () => {
  const node = (filter: unknown) => parseFilter(filter, SPEC.metadata)!;
  // Keys as a keyword column gives them: "a" → 1, "b" → 2; "zzz" is held by no row.
  const keyOf = (column: number, v: unknown) => (column !== 2 ? (typeof v === "number" ? v : null) : v === "a" ? 1 : v === "b" ? 2 : null);
  const point = (k: number) => ({ lo: k, loOpen: false, hi: k, hiOpen: false });

  test("a numeric range, or an `and` of them on one column, is one span; `=` and `in` a point a value; nothing else", () => {
    expect(spansOf(node({ price: { lt: 5 } }), keyOf)).toEqual({ column: 0, spans: [{ lo: -Infinity, loOpen: false, hi: 5, hiOpen: true }] });
    expect(spansOf(node({ price: { gte: 2, lte: 7 } }), keyOf)).toEqual({ column: 0, spans: [{ lo: 2, loOpen: false, hi: 7, hiOpen: false }] });
    expect(spansOf(node({ stock: { gt: 1, gte: 1, lt: 9, lte: 9 } }), keyOf)).toEqual({ column: 1, spans: [{ lo: 1, loOpen: true, hi: 9, hiOpen: true }] });
    expect(spansOf(node({ stock: 4 }), keyOf)).toEqual({ column: 1, spans: [point(4)] });
    expect(spansOf(node({ stock: { in: [4, 2, 4] } }), keyOf)).toEqual({ column: 1, spans: [point(4), point(2)] });
    expect(spansOf(node({ category: "b" }), keyOf)).toEqual({ column: 2, spans: [point(2)] });
    expect(spansOf(node({ category: { in: ["a", "zzz", "b", "a"] } }), keyOf)).toEqual({ column: 2, spans: [point(1), point(2)] });
    expect(spansOf(node({ category: "zzz" }), keyOf)).toEqual({ column: 2, spans: [] });
    for (const other of [{ price: { neq: 3 } }, { price: { lt: 5 }, stock: { lt: 3 } }, { $or: [{ price: { lt: 1 } }, { price: { gt: 9 } }] }, { category: { nin: ["a"] } }, { price: { exists: true } }]) {
      expect(spansOf(node(other), keyOf)).toBeNull();
    }
  });

  test("a run holds exactly the rows of its span, at the edges and among equal values", () => {
    const keys = Float64Array.from([1, 2, 2, 2, 3, 5, 5, 8]);
    const run = (filter: unknown) => runOf(keys, spansOf(node(filter), keyOf)!.spans[0]!);
    expect(run({ price: { lt: 2 } })).toEqual({ from: 0, to: 1 });
    expect(run({ price: { lte: 2 } })).toEqual({ from: 0, to: 4 });
    expect(run({ price: { gt: 2 } })).toEqual({ from: 4, to: 8 });
    expect(run({ price: { gte: 5, lt: 8 } })).toEqual({ from: 5, to: 7 });
    expect(run({ price: 4 })).toEqual({ from: 5, to: 5 });
    expect(run({ price: { gt: 8 } })).toEqual({ from: 8, to: 8 });
    expect(run({ category: "b" })).toEqual({ from: 1, to: 4 });
    const empty = run({ price: { gt: 6, lt: 2 } }); // nothing matches
    expect(empty.to - empty.from).toBe(0);
  });

  test("an order holds the live rows with a key, by key and then rid, whatever the keys", () => {
    const key = fc.oneof(fc.constant(null), fc.integer({ min: -3, max: 3 }), fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }));
    fc.assert(
      fc.property(fc.array(fc.record({ live: fc.boolean(), key }), { maxLength: 300 }), (rows) => {
        const source = {
          dims: 2,
          ridEnd: rows.length,
          liveCount: rows.filter((r) => r.live).length,
          isLive: (rid: number) => rows[rid]!.live,
          gatherCodes: (rids: ArrayLike<number>, from: number, max: number) => Int8Array.from({ length: 2 * Math.min(max, rids.length - from) }, (_, i) => rids[from + (i >> 1)]! % 128),
        };
        const order = makeOrder(source, (rid) => rows[rid]!.key, 7);
        const expected = rows.flatMap((r, rid) => (r.live && r.key !== null ? [{ rid, key: r.key }] : [])).sort((a, b) => a.key - b.key || a.rid - b.rid);
        expect([...order.rids]).toEqual(expected.map((e) => e.rid));
        expect([...order.keys]).toEqual(expected.map((e) => e.key));
        // Each row's codes sit at its place in the order.
        order.rids.forEach((rid, i) => expect(order.chunks[0]![2 * i]).toBe(rid % 128));
      }),
      { numRuns: 300, seed: 45 },
    );
  });

  test("an order waits 100 times its own last making after a write, and no other column's", () => {
    // The clock moves `tick` ms at every read: an order's making (a read before, one after) takes tick.
    let clock = 0;
    let tick = 0;
    const mirror = new Mirror(SPEC, { orderQuietMs: 1_000, now: () => (clock += tick) });
    const v = new Float32Array(64).fill(1);
    [5, 2, 1].forEach((price, rid) => mirror.set(rid, v, [price, rid, "a", null], String(rid), ""));
    clock = 1_000;
    tick = 50;
    expect(mirror.orders.get(0)).not.toBeNull(); // made in 50 ms
    tick = 0;
    expect(mirror.orders.get(2)).not.toBeNull(); // its own first making: 1 s after the writes is enough
    mirror.setMetadata(1, [3, 1, "b", null]);
    clock += 4_000;
    expect(mirror.orders.get(0)).toBeNull(); // 4 s < 100 × 50 ms
    expect(mirror.orders.get(2)).not.toBeNull(); // made in 0 ms: 1 s is enough
    clock += 1_000;
    expect([...mirror.orders.get(0)!.keys]).toEqual([1, 3, 5]);
  });

  test("an order is made once writes pause, holds the rows in key order, and is stale after any write", () => {
    let clock = 0;
    const mirror = new Mirror(SPEC, { orderQuietMs: 1_000, now: () => clock });
    const v = new Float32Array(64).fill(1);
    [5, null, 1, 3, 1].forEach((price, rid) => mirror.set(rid, v, [price, rid, ["b", "a"][rid % 2]!, true], String(rid), ""));
    expect(mirror.orders.get(0)).toBeNull(); // written just now
    clock = 1_000;
    const order = mirror.orders.get(0)!;
    expect([...order.keys]).toEqual([1, 1, 3, 5]);
    expect([...order.rids]).toEqual([2, 4, 3, 0]);
    expect(mirror.orders.get(0)).toBe(order);
    const keywords = mirror.orders.get(2)!; // "b" is the first value seen: key 1
    expect([...keywords.keys]).toEqual([1, 1, 1, 2, 2]);
    expect([...keywords.rids]).toEqual([0, 2, 4, 1, 3]);
    expect(mirror.orders.get(3)).toBeNull(); // a boolean column has none
    mirror.setMetadata(4, [9, 4, "a", false]);
    expect(mirror.orders.isCurrent(order)).toBe(false);
    expect(mirror.orders.get(0)).toBeNull();
    clock = 2_000;
    expect([...mirror.orders.get(0)!.rids]).toEqual([2, 3, 0, 4]);
    mirror.remove(3);
    clock = 3_000;
    expect([...mirror.orders.get(2)!.rids]).toEqual([0, 2, 1, 4]);
  });
});

function rowsOf(vectors: Float32Array[], offset = 0): UpsertRow[] {
  return vectors.map((vector, i) => {
    const id = i + offset;
    // Prices with many ties (200 distinct values), some null; stock a small integer.
    const metadata: Metadata = { price: id % 17 === 0 ? null : (id * 7919) % 200, stock: id % 23, category: ["a", "b", "c"][id % 3]!, sale: id % 2 === 0 };
    return { pk: String(id), textHash: `t${id}`, metaHash: `m${id}`, text: `row ${id}`, metadata, vector };
  });
}

const FILTERS: [unknown, (m: Metadata) => boolean][] = [
  [{ category: "a" }, (m) => m.category === "a"],
  [{ category: { in: ["c", "a"] } }, (m) => m.category === "a" || m.category === "c"],
  [{ stock: { in: [7, 9] } }, (m) => m.stock === 7 || m.stock === 9],
  [{ price: { lt: 10 } }, (m) => m.price !== null && (m.price as number) < 10],
  [{ price: { gte: 50, lte: 60 } }, (m) => m.price !== null && (m.price as number) >= 50 && (m.price as number) <= 60],
  [{ price: { gt: 150 } }, (m) => m.price !== null && (m.price as number) > 150],
  [{ stock: 7 }, (m) => m.stock === 7],
];

describe.each([["f32", {}], ["compact", { floatMirrorBytes: 0 }]] as const)("%s mirror", (_, memory) => {
  test("filters answer exactly through column orders, after a row's vector, value or presence changes, and after a restart", async () => {
    // exactCapScale: every filter takes the exact path (which scan the planner picks is planner.test.ts's).
    await using w = await makeWorld({ ...memory, exactCapScale: 1e9, orderQuietMs: 0 });
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
    // The category, stock and price orders: 3,000 rows × (64 + 12) B each, less price's nulls.
    expect((await store.stats("vt_r")).memoryBytes - before).toBeGreaterThanOrEqual(3 * 2_800 * 76);
    const write = async (changed: UpsertRow[]) => {
      for (const r of changed) rows.set(r.pk, r);
      await store.upsert("vt_r", changed);
      await check();
    };
    // A row inside `price < 10` takes the first query's vector; another moves into the range.
    const inside = [...rows.values()].find((r) => r.metadata.price === 3)!;
    await write([{ ...inside, textHash: "moved", vector: queries[0]! }]);
    expect((await store.search("vt_r", { vector: queries[0]!, k: 1, filter: { price: { lt: 10 } } })).hits[0]!.pk).toBe(inside.pk);
    await write([{ ...rows.get("1")!, metaHash: "moved", metadata: { price: 0, stock: 7, category: "a", sale: null } }, ...rowsOf([queries[1]!], 9_000)]);
    await store.delete("vt_r", [inside.pk]);
    rows.delete(inside.pk);
    await check();
    await store.close();
    store = await w.open();
    await store.whenReady("vt_r");
    await check();
  });
});

test("while writes have not paused, filters take the paths without an order, exactly: none is made", async () => {
  await using w = await makeWorld({ exactCapScale: 1e9, orderQuietMs: 60_000 });
  const store = await w.open();
  await store.createCollection("vt_r", SPEC);
  const rows = rowsOf(clusteredVectors(2_000, 64, 5));
  await store.upsert("vt_r", rows);
  await store.whenReady("vt_r");
  const before = (await store.stats("vt_r")).memoryBytes;
  const q = clusteredVectors(1, 64, 6)[0]!;
  for (const [filter, keep] of FILTERS) {
    const found = await store.search("vt_r", { vector: q, k: 10, filter });
    expect(pks(found.hits)).toEqual(referenceTopK(rows, q, 10, keep));
  }
  expect((await store.stats("vt_r")).memoryBytes).toBe(before);
});
