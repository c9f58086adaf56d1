// The warehouse store's behaviours beyond the shared TableStore contract (contract.ts, which runs
// it as a subject through the seam): quoted and NaN metadata, text keys tied in code point order,
// and the errors in the store's own terms.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { GenerationSpec, Metadata, UpsertRow } from "../../../src/drivers/store-api/index.ts";
import { productRows, SPEC } from "../vector-store/helpers.ts";
import { warehouseWorld, type WarehouseWorld } from "./warehouse-world.ts";

// Starts a server and a DuckDB: slower than bun's 5 s default on a loaded 2-core machine.
setDefaultTimeout(30_000);

const unit = (...xs: number[]) => Float32Array.from(xs);
const row = (pk: string, vector: Float32Array, metadata: Metadata = {}, text = `row ${pk}`): UpsertRow => ({ pk, textHash: `t-${text}`, metaHash: `m-${JSON.stringify(metadata)}`, text, metadata, vector });

let w: WarehouseWorld;
const world = { get store() { return w.store; }, ref: (key: string) => w.ref(`${key}xxxxxxxx`.slice(0, 8), key) };
beforeAll(async () => {
  w = await warehouseWorld();
});
afterAll(async () => {
  await w?.[Symbol.asyncDispose]();
});

describe("warehouse store beyond the contract", () => {
  test("metadata round-trips typed; nulls and missing columns as null, NaN as null", async () => {
    const { store } = world;
    const ref = world.ref("meta");
    await store.ensureTable(ref, SPEC);
    const v = (i: number) => Float32Array.from({ length: 16 }, (_, j) => (j === i ? 1 : 0));
    await store.upsert(ref, [row("1", v(0), { category: "it's \"quoted\" \\ ✓", price: -0.1, stock: -5, active: false }), row("2", v(1), { price: Number.NaN })]);
    const { hits } = await store.search(ref, { vector: Float32Array.from({ length: 16 }, (_, j) => (j < 2 ? 1 : 0)), k: 5 });
    expect(hits.map((h) => [h.pk, h.metadata])).toEqual([
      ["1", { category: "it's \"quoted\" \\ ✓", price: -0.1, stock: -5, active: false }],
      ["2", { category: null, price: null, stock: null, active: null }],
    ]);
  });

  test("ties in score go by pk: numerically for numeric pks, by code point for text pks, also across the k boundary", async () => {
    const { store } = world;
    const same = unit(0.6, 0.8, 0, 0);
    const numeric: GenerationSpec = { dimensions: 4, numericPk: true, metadata: [] };
    const nref = world.ref("tiesnum");
    await store.ensureTable(nref, numeric);
    const npks = ["100", "9", "10", "-1", "2.5", "12345678901234567890", "3"];
    await store.upsert(nref, [...npks.map((pk) => row(pk, same)), row("0", unit(0, 0, 1, 0)), row("1", unit(0.6, 0.8, 0.01, 0))]);
    expect((await store.search(nref, { vector: same, k: 20 })).hits.map((h) => h.pk)).toEqual(["-1", "2.5", "3", "9", "10", "100", "12345678901234567890", "1", "0"]);
    expect((await store.search(nref, { vector: same, k: 3 })).hits.map((h) => h.pk)).toEqual(["-1", "2.5", "3"]);
    const tref = world.ref("tiestext");
    await store.ensureTable(tref, { ...numeric, numericPk: false });
    await store.upsert(tref, ["b", "a", "B", "ä", "aa", "10", "9", "😀", "ｚ"].map((pk) => row(pk, same)));
    expect((await store.search(tref, { vector: same, k: 20 })).hits.map((h) => h.pk)).toEqual(["10", "9", "B", "a", "aa", "b", "ä", "ｚ", "😀"]);
    expect((await store.search(tref, { vector: same, k: 2 })).hits.map((h) => h.pk)).toEqual(["10", "9"]);
  });

  // Bad filters: the contract's "filters" behaviour; the swap under searches: warehouse.test.ts.
  test("errors: bad rows, another shape, missing tables and generations", async () => {
    const { store } = world;
    const ref = world.ref("errors");
    await expect(store.createGeneration(ref, SPEC)).rejects.toMatchObject({ code: "collection_not_found" });
    await expect(store.count(ref)).rejects.toMatchObject({ code: "collection_not_found" });
    await store.ensureTable(ref, SPEC);
    const vector = new Float32Array(16).fill(1);
    const bad = [row("1", new Float32Array(3).fill(1)), row("1", new Float32Array(16)), row("1", vector, { stock: 1.5 }), row("1", vector, { unknown: 1 }), row("1", vector, { category: 3 })];
    for (const r of bad) await expect(store.upsert(ref, [row("0", vector), r])).rejects.toMatchObject({ code: "invalid_row" });
    expect(await store.count(ref)).toBe(0);
    await expect(store.ensureTable(ref, { ...SPEC, dimensions: 8 })).rejects.toMatchObject({ code: "collection_exists" });
    await expect(store.swapGeneration(ref, 7)).rejects.toMatchObject({ code: "generation_not_found" });
    await expect(store.dropGeneration(ref, 1)).rejects.toMatchObject({ code: "generation_not_found" });
    await expect(store.upsert(ref, productRows(1, 16), { generation: 5 })).rejects.toMatchObject({ code: "generation_not_found" });
    await store.upsert(ref, productRows(2, 16), { generation: 1 }); // the live generation may be named
    expect(await store.count(ref, undefined, { generation: 1 })).toBe(2);
  });
});
