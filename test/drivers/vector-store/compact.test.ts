// A collection that outgrows VectorStoreOptions.floatMirrorBytes drops its f32 vectors and texts
// from memory (mirror.ts compact) and keeps answering exactly: scores from libSQL (refine.ts).
import { describe, expect, test } from "bun:test";
import { makeWorld, productRows, referenceTopK, SPEC } from "./helpers.ts";

const ROWS = 3_000; // past the planner's exact-unfiltered bound: unfiltered searches go through HNSW
const LIMIT_ROWS = 1_000;
const memory = { floatMirrorBytes: LIMIT_ROWS * SPEC.dimensions * 4, index: { threads: 1 } };

describe("compact mirror", () => {
  test("past the limit the mirror turns compact: a quarter of the vector memory, every row still found by its own vector, exact scores and texts", async () => {
    await using w = await makeWorld();
    const store = await w.open(memory);
    const roomy = await w.open({ index: { threads: 1 } });
    await store.createCollection("vt_c", SPEC);
    await roomy.createCollection("vt_f", SPEC);
    const rows = productRows(ROWS, SPEC.dimensions, 5);
    for (let i = 0; i < ROWS; i += 500) {
      await store.upsert("vt_c", rows.slice(i, i + 500));
      await roomy.upsert("vt_f", rows.slice(i, i + 500));
      expect((await store.stats("vt_c")).compact).toBe(i + 500 > LIMIT_ROWS);
    }
    const compact = await store.stats("vt_c");
    const full = await roomy.stats("vt_f");
    expect(full.compact).toBe(false);
    // The f32 vectors (and the texts) are gone: at least the vectors' size saved.
    expect(full.memoryBytes - compact.memoryBytes).toBeGreaterThanOrEqual(ROWS * SPEC.dimensions * 4);
    for (const row of rows) {
      const { hits, path } = await store.search("vt_c", { vector: row.vector, k: 1 });
      expect(path).toBe("hnsw");
      expect(hits[0]?.score).toBeCloseTo(1, 5);
      expect(hits[0]?.text).toBe(row.text);
      expect(hits[0]?.metadata).toEqual(row.metadata);
    }
    for (const q of rows.slice(0, 20).map((r) => r.vector.map((x, j) => x + Math.sin(j) * 0.3))) {
      const a = await store.search("vt_c", { vector: q, k: 10 });
      const b = await roomy.search("vt_f", { vector: q, k: 10 });
      expect(a.hits.map((h) => h.pk)).toEqual(referenceTopK(rows, q, 10));
      // The same exact scores as the store that kept its f32 vectors.
      a.hits.forEach((h, i) => expect(h.score).toBeCloseTo(b.hits[i]!.score, 6));
    }
  });

  test("a restart loads compact from the start, and deletes and re-upserts are answered from libSQL's current rows", async () => {
    await using w = await makeWorld();
    const first = await w.open(memory);
    await first.createCollection("vt_c", SPEC);
    const rows = productRows(ROWS, SPEC.dimensions, 6);
    await first.upsert("vt_c", rows);
    await first.close();
    const store = await w.open(memory);
    await store.whenReady("vt_c");
    expect((await store.stats("vt_c")).compact).toBe(true);
    const target = rows[42]!;
    expect((await store.search("vt_c", { vector: target.vector, k: 1 })).hits[0]?.pk).toBe("42");
    await store.delete("vt_c", ["42"]);
    expect((await store.search("vt_c", { vector: target.vector, k: 5 })).hits.map((h) => h.pk)).not.toContain("42");
    // Row 43 now carries row 42's vector and a new text: found by it, with the new text.
    await store.upsert("vt_c", [{ ...rows[43]!, vector: target.vector, text: "moved", textHash: "moved" }]);
    const moved = await store.search("vt_c", { vector: target.vector, k: 1, filter: { category: rows[43]!.metadata.category as string } });
    expect(moved.hits[0]).toMatchObject({ pk: "43", text: "moved" });
    expect(moved.hits[0]!.score).toBeCloseTo(1, 5);
  });
});
