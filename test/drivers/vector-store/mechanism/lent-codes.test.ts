// A compact mirror reads its rows' i8 codes from the i8 index instead of keeping a second copy
// (lent-codes.ts), and keeps only the codes of rows the graph does not hold.
import { describe, expect, test } from "bun:test";
import { codesTopK } from "../../../../src/drivers/vector-store/exact.ts";
import { addCurrentVersions } from "../../../../src/drivers/vector-store/adds.ts";
import { HnswIndex } from "../../../../src/drivers/vector-store/hnsw.ts";
import { Mirror } from "../../../../src/drivers/vector-store/mirror.ts";
import { DEFAULT_INDEX_PARAMS } from "../../../../src/drivers/vector-store/options.ts";
import type { GenerationSpec } from "../../../../src/drivers/store-api/index.ts";
import { clusteredVectors, makeWorld, productRows, referenceTopK, SPEC } from "../helpers.ts";

const ROWS = 3_000;
const compactStore = { floatMirrorBytes: 0, index: { threads: 1 } };

describe("the mirror", () => {
  const spec: GenerationSpec = { dimensions: 32, numericPk: true, metadata: [] };
  const params = { ...DEFAULT_INDEX_PARAMS, threads: 1 };
  const vectors = clusteredVectors(2_000, 32, 21);
  const rids = vectors.map((_, i) => (i < 1_000 ? i : 262_144 + i)); // two slabs

  function filled(): { mirror: Mirror; codes: Int8Array[] } {
    const mirror = new Mirror(spec, { floatBytes: 0 });
    rids.forEach((rid, i) => mirror.set(rid, vectors[i]!, [], `${rid}`, "", 7));
    return { mirror, codes: rids.map((rid) => mirror.gatherCodes([rid], 0, 1).slice()) };
  }

  test("lends from an index given its codes, then keeps only rows written since, until added", () => {
    const { mirror, codes } = filled();
    const index = new HnswIndex(32, params);
    addCurrentVersions(index, mirror, Array.from(mirror.liveRids()));
    const before = mirror.bytes();
    expect(mirror.lend(index)).toBe(true);
    expect(mirror.codesKept).toBe(0);
    expect(before - mirror.bytes()).toBeGreaterThan(rids.length * 32 * 0.9);
    rids.forEach((rid, i) => expect(mirror.gatherCodes([rid], 0, 1)).toEqual(codes[i]!));
    // One gather across both slabs, as the exact scan asks.
    const all = mirror.gatherCodes(rids, 0, rids.length);
    expect(all.length).toBe(rids.length * 32);
    expect(all.subarray(999 * 32, 1001 * 32)).toEqual(new Int8Array([...codes[999]!, ...codes[1000]!]));
    // A row rewritten: its new codes wait in the mirror until the index holds its new version.
    mirror.set(rids[5]!, vectors[6]!, [], "5", "", 8);
    expect(mirror.codesKept).toBe(1);
    expect(mirror.gatherCodes([rids[5]!], 0, 1)).toEqual(codes[6]!);
    expect(codesTopK(mirror, vectors[6]!, rids, 2).map((c) => c.rid).sort((a, b) => a - b)).toEqual([rids[5]!, rids[6]!]);
    addCurrentVersions(index, mirror, [rids[5]!]);
    expect(mirror.codesKept).toBe(0);
    expect(mirror.gatherCodes([rids[5]!], 0, 1)).toEqual(codes[6]!);
    mirror.remove(rids[7]!);
    expect(mirror.liveCount).toBe(rids.length - 1);
  });

  test("keeps its codes where the index lacks most rows: a rebuild's empty index, a file far behind", () => {
    const { mirror, codes } = filled();
    const partial = new HnswIndex(32, params);
    addCurrentVersions(partial, mirror, Array.from(mirror.liveRids()).slice(0, 500));
    expect(mirror.lend(partial)).toBe(false);
    expect(mirror.codesKept).toBeNull();
    rids.forEach((rid, i) => expect(mirror.gatherCodes([rid], 0, 1)).toEqual(codes[i]!));
    // Lent, then moved to an empty index (a rebuild): the codes come back to the mirror intact.
    const index = new HnswIndex(32, params);
    addCurrentVersions(index, mirror, Array.from(mirror.liveRids()));
    expect(mirror.lend(index)).toBe(true);
    expect(mirror.lend(new HnswIndex(32, params))).toBe(false);
    expect(mirror.codesKept).toBeNull();
    rids.forEach((rid, i) => expect(mirror.gatherCodes([rid], 0, 1)).toEqual(codes[i]!));
  });

  test("a load lent from its first row keeps no codes the index holds, and takes them all back from an index far behind", () => {
    const { mirror: source, codes } = filled();
    const whole = new HnswIndex(32, params);
    addCurrentVersions(whole, source, Array.from(source.liveRids()));
    const behind = new HnswIndex(32, params);
    addCurrentVersions(behind, source, Array.from(source.liveRids()).slice(0, 500));
    for (const [index, lends] of [[whole, true], [behind, false]] as const) {
      const mirror = new Mirror(spec, { floatBytes: 0 });
      expect(mirror.lend(index)).toBe(true); // empty: nothing kept yet
      for (let page = 0; page < rids.length; page += 500) {
        rids.slice(page, page + 500).forEach((rid, i) => mirror.set(rid, vectors[page + i]!, [], `${rid}`, "", 7));
        mirror.settleCodes();
      }
      expect(mirror.codesKept).toBe(lends ? 0 : null);
      rids.forEach((rid, i) => expect(mirror.gatherCodes([rid], 0, 1)).toEqual(codes[i]!));
    }
  });
});

describe("a compact store", () => {
  test("keeps no copy of the codes the index holds, and answers as exactly", async () => {
    await using w = await makeWorld();
    const rows = productRows(ROWS, SPEC.dimensions, 31);
    const queries = rows.slice(0, 20).map((r) => r.vector.map((x, j) => x + Math.cos(j) * 0.3));
    const store = await w.open(compactStore);
    await store.createCollection("vt_c", SPEC);
    for (let i = 0; i < ROWS; i += 500) await store.upsert("vt_c", rows.slice(i, i + 500));
    await store.whenReady("vt_c");
    expect((await store.stats("vt_c")).codesKept).toBe(0);
    for (const q of queries) {
      expect((await store.search("vt_c", { vector: q, k: 10 })).hits.map((h) => h.pk)).toEqual(referenceTopK(rows, q, 10));
      expect((await store.search("vt_c", { vector: q, k: 5, filter: { stock: 7 } })).hits.map((h) => h.pk)).toEqual(referenceTopK(rows, q, 5, (m) => m.stock === 7));
      expect((await store.search("vt_c", { vector: q, k: 5, filter: { category: "books" } })).hits.map((h) => h.pk)).toEqual(referenceTopK(rows, q, 5, (m) => m.category === "books"));
    }
    await store.close();
  });

  test("after rewrites, a compaction and a restart every row is found by its own vector, filtered or not", async () => {
    await using w = await makeWorld();
    const events: string[] = [];
    const first = await w.open({ ...compactStore, log: (event) => events.push(event) });
    await first.createCollection("vt_c", SPEC);
    let rows = productRows(ROWS, SPEC.dimensions, 32);
    await first.upsert("vt_c", rows);
    // Rewrite half the rows twice: 3,000 dead keys of 9,000, past the compaction's share.
    for (const seed of [33, 34]) {
      const moved = productRows(ROWS / 2, SPEC.dimensions, seed).map((r, i) => ({ ...r, pk: rows[i]!.pk, metadata: rows[i]!.metadata }));
      await first.upsert("vt_c", moved);
      rows = [...moved, ...rows.slice(ROWS / 2)];
    }
    await first.delete("vt_c", ["2999"]);
    rows = rows.slice(0, -1);
    await first.whenReady("vt_c");
    expect(events).toContain("vector_store.index_compacted");
    expect(events).not.toContain("vector_store.upkeep_failed");
    const stats = await first.stats("vt_c");
    expect(stats.codesKept).toBe(0);
    expect(stats.rows).toBe(ROWS - 1);
    const findsAll = async (store: typeof first) => {
      for (const row of rows) {
        const unfiltered = await store.search("vt_c", { vector: row.vector, k: 1 });
        expect(unfiltered.hits[0]?.pk).toBe(row.pk);
        if (row.metadata.stock === null) continue;
        const filtered = await store.search("vt_c", { vector: row.vector, k: 1, filter: { stock: row.metadata.stock as number } });
        expect(filtered.hits[0]?.pk).toBe(row.pk);
      }
    };
    await findsAll(first);
    await first.close();
    const again = await w.open(compactStore);
    await again.whenReady("vt_c");
    expect((await again.stats("vt_c")).codesKept).toBe(0);
    await findsAll(again);
  });
});
