// Keyword blocks (keyword-blocks.ts): contiguous codes per keyword value for the exact path. The
// store must answer exactly through them after any change to a row they hold (its vector, its
// value, its removal) and after a restart; the cache keeps to its budget, least recently used first.
import { describe, expect, test } from "bun:test";
import { type Block, KeywordBlocks } from "../../../../src/drivers/vector-store/keyword-blocks.ts";
import type { GenerationSpec, Metadata, UpsertRow } from "../../../../src/drivers/vector-store/index.ts";
import { clusteredVectors, makeWorld, pks, referenceTopK } from "../helpers.ts";

describe("the cache", () => {
  const block = (rows: number): Block => ({ rids: new Uint32Array(rows), codes: new Int8Array(rows * 4) });

  test("keeps to its budget, dropping the least recently used block first", () => {
    const blocks = new KeywordBlocks(4, 10_000); // a 600-row block is 600 × (4 + 4) = 4,800 B: two fit
    let made = 0;
    const get = (value: string) => blocks.get(0, value, () => (made++, block(600)));
    get("a");
    get("b");
    get("a"); // "a" is now the most recently used
    expect(made).toBe(2);
    get("c"); // evicts "b"
    expect(made).toBe(3);
    expect(blocks.bytes()).toBe(9_600);
    get("a");
    expect(made).toBe(3);
    get("b");
    expect(made).toBe(4);
  });

  test("a touched value is made again; blocks too small or too large are not kept", () => {
    const blocks = new KeywordBlocks(4, 10_000);
    let made = 0;
    blocks.get(0, "a", () => (made++, block(600)));
    blocks.touch(1, "a"); // another column's value of the same name
    blocks.get(0, "a", () => (made++, block(600)));
    expect(made).toBe(1);
    blocks.touch(0, "a");
    expect(blocks.bytes()).toBe(0);
    blocks.get(0, "a", () => (made++, block(600)));
    expect(made).toBe(2);
    expect([blocks.fits(511), blocks.fits(512), blocks.fits(1_250), blocks.fits(1_251)]).toEqual([false, true, true, false]);
  });
});

const SPEC64: GenerationSpec = { dimensions: 64, numericPk: true, metadata: [{ name: "category", type: "keyword" }, { name: "price", type: "float" }] };

function rowsOf(vectors: Float32Array[], offset = 0): UpsertRow[] {
  return vectors.map((vector, i) => {
    const id = i + offset;
    return { pk: String(id), textHash: `t${id}`, metaHash: `m${id}`, text: `row ${id}`, metadata: { category: ["a", "b", "c"][id % 3]!, price: id % 100 }, vector };
  });
}

// exactCapScale: every filter here takes the exact path (which scan the planner picks is planner.test.ts's).
describe.each([["f32", { exactCapScale: 1e9 }], ["compact", { floatMirrorBytes: 0, exactCapScale: 1e9 }]] as const)("%s mirror", (_, memory) => {
  test("keyword filters answer exactly through blocks after a row's vector, value or presence changes, and after a restart", async () => {
    await using w = await makeWorld(memory);
    let store = await w.open();
    await store.createCollection("vt_k", SPEC64);
    const rows = new Map(rowsOf(clusteredVectors(3_000, 64, 7)).map((r) => [r.pk, r]));
    await store.upsert("vt_k", [...rows.values()]);
    await store.whenReady("vt_k");
    const queries = clusteredVectors(6, 64, 8);
    const check = async () => {
      for (const q of queries) {
        for (const [filter, keep] of [
          [{ category: "a" }, (m: Metadata) => m.category === "a"],
          [{ category: { in: ["c", "a"] } }, (m: Metadata) => m.category === "a" || m.category === "c"],
        ] as const) {
          const found = await store.search("vt_k", { vector: q, k: 10, filter });
          expect(found.path).toBe("exact-memory");
          expect(pks(found.hits)).toEqual(referenceTopK([...rows.values()], q, 10, keep));
        }
      }
    };
    const before = (await store.stats("vt_k")).memoryBytes;
    await check();
    // Blocks of "a" and "c" (1,000 rows × (64 + 4) B each) now exist.
    expect((await store.stats("vt_k")).memoryBytes - before).toBeGreaterThanOrEqual(2 * 1_000 * 68);
    const write = async (changed: UpsertRow[]) => {
      for (const r of changed) rows.set(r.pk, r);
      await store.upsert("vt_k", changed);
      await check();
    };
    // A row of "a" takes the first query's vector: same value, new codes.
    await write([{ ...rows.get("3")!, textHash: "t3'", vector: queries[0]! }]);
    expect((await store.search("vt_k", { vector: queries[0]!, k: 1, filter: { category: "a" } })).hits[0]!.pk).toBe("3");
    // It moves to "b"; another row joins "a" next to the second query.
    await write([{ ...rows.get("3")!, metaHash: "m3'", metadata: { category: "b", price: 3 } }, { ...rowsOf([queries[1]!], 5_000)[0]!, metadata: { category: "a", price: 1 } }]);
    // The second query's nearest "a" row is deleted.
    const nearest = (await store.search("vt_k", { vector: queries[1]!, k: 1, filter: { category: "a" } })).hits[0]!.pk;
    expect(nearest).toBe("5000");
    await store.delete("vt_k", [nearest]);
    rows.delete(nearest);
    await check();
    await store.close();
    store = await w.open();
    await store.whenReady("vt_k");
    await check();
  });
});
