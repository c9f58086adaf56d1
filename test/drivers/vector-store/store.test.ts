import { describe, expect, test } from "bun:test";
import { FilterError, VectorStoreError, type Metadata, type UpsertRow } from "../../../src/drivers/store-api/index.ts";
import { clusteredVectors, cosine, makeWorld, overlap, pks, productRows, referenceTopK, SPEC } from "./helpers.ts";

const queries = clusteredVectors(20, SPEC.dimensions, 99);

// Every behaviour holds with f32 vectors in memory and with a compact mirror (i8 codes, exact scores read back: refine.ts).
const MIRRORS = [["f32", {}], ["compact", { floatMirrorBytes: 0 }]] as const;

describe.each(MIRRORS)("happy, %s mirror", (_, memory) => {
  test("exact answers match brute force, with filters, ordered by score", async () => {
    await using w = await makeWorld(memory);
    const store = await w.open();
    await store.createCollection("vt_a", SPEC);
    const rows = productRows(300, SPEC.dimensions);
    await store.upsert("vt_a", rows);
    const keep = (m: Metadata) => m.category === "books" && (m.price === null || (m.price as number) > 20);
    for (const q of queries.slice(0, 5)) {
      const plain = await store.search("vt_a", { vector: q, k: 10 });
      expect(plain.path).toBe("exact-memory");
      expect(pks(plain.hits)).toEqual(referenceTopK(rows, q, 10));
      const scores = plain.hits.map((h) => h.score);
      expect([...scores].sort((a, b) => b - a)).toEqual(scores);
      const filtered = await store.search("vt_a", { vector: q, k: 10, filter: { category: "books", $or: [{ price: { gt: 20 } }, { price: { exists: false } }] } });
      expect(pks(filtered.hits)).toEqual(referenceTopK(rows, q, 10, keep));
    }
  });

  test("keyword `=` and `in` filters find moved rows under their new value only, and no deleted row, before and after a restart", async () => {
    await using w = await makeWorld(memory);
    let store = await w.open();
    await store.createCollection("vt_a", SPEC);
    let rows = productRows(300, SPEC.dimensions);
    await store.upsert("vt_a", rows);
    // Every third row moves to "garden", every seventh is deleted, then a few move back.
    const moved = rows.map((r, i) => (i % 3 === 0 ? { ...r, metadata: { ...r.metadata, category: "garden" } } : r));
    await store.upsert("vt_a", moved.filter((_, i) => i % 3 === 0));
    await store.delete("vt_a", rows.filter((_, i) => i % 7 === 0).map((r) => r.pk));
    rows = moved.filter((_, i) => i % 7 !== 0);
    const back = rows.filter((_, i) => i % 10 === 0).map((r) => ({ ...r, metadata: { ...r.metadata, category: "books" } }));
    await store.upsert("vt_a", back);
    rows = rows.map((r) => back.find((b) => b.pk === r.pk) ?? r);
    const check = async () => {
      for (const q of queries.slice(0, 4)) {
        for (const [filter, keep] of [
          [{ category: "garden" }, (m: Metadata) => m.category === "garden"],
          [{ category: { in: ["books", "garden", "books"] } }, (m: Metadata) => m.category === "books" || m.category === "garden"],
        ] as const) {
          const found = await store.search("vt_a", { vector: q, k: 300, filter });
          expect(found.path).toBe("exact-memory");
          expect(pks(found.hits)).toEqual(referenceTopK(rows, q, 300, keep));
        }
      }
    };
    await check();
    await store.close();
    store = await w.open();
    await store.whenReady("vt_a");
    await check();
  });

  test("a pk given twice in one upsert is stored as its last row, before and after a restart", async () => {
    await using w = await makeWorld(memory);
    let store = await w.open();
    await store.createCollection("vt_a", SPEC);
    // 150 rows: the repeats fall in one statement's rows and across two (64 a statement, rows.ts).
    const rows = productRows(150, SPEC.dimensions);
    const again = (from: number, text: string): UpsertRow => ({ ...rows[from]!, pk: "3", text, metadata: { ...rows[from]!.metadata, category: "repeat" } });
    await store.upsert("vt_a", [...rows.slice(0, 10), again(140, "first repeat"), ...rows.slice(10, 100), again(145, "last repeat"), ...rows.slice(100, 140)]);
    const check = async () => {
      expect(await store.count("vt_a")).toBe(140);
      const { hits } = await store.search("vt_a", { vector: rows[145]!.vector, k: 1 });
      expect(hits.map((h) => [h.pk, h.text, h.metadata.category])).toEqual([["3", "last repeat", "repeat"]]);
      expect(await store.count("vt_a", { category: "repeat" })).toBe(1);
      const own = await store.search("vt_a", { vector: rows[3]!.vector, k: 140 });
      expect(own.hits.filter((h) => h.pk === "3").map((h) => h.score)).toEqual([expect.closeTo(cosine(rows[3]!.vector, rows[145]!.vector), 4)]);
    };
    await check();
    await store.close();
    store = await w.open();
    await store.whenReady("vt_a");
    await check();
  });

  test("hits carry typed metadata, text and cosine similarity", async () => {
    await using w = await makeWorld(memory);
    const store = await w.open();
    await store.createCollection("vt_a", SPEC);
    const rows = productRows(20, SPEC.dimensions);
    await store.upsert("vt_a", rows);
    const { hits } = await store.search("vt_a", { vector: rows[4]!.vector, k: 1 });
    expect(hits[0]!.pk).toBe("4");
    expect(hits[0]!.score).toBeCloseTo(1, 5);
    expect(hits[0]!.text).toBe("product 4");
    expect(hits[0]!.metadata).toEqual(rows[4]!.metadata);
  });

  test("ties in score are broken by primary key, numerically for numeric keys", async () => {
    await using w = await makeWorld(memory);
    const store = await w.open();
    await store.createCollection("vt_a", SPEC);
    const [same, other] = clusteredVectors(2, SPEC.dimensions, 5);
    const row = (pk: string, vector: Float32Array) => ({ pk, textHash: "t", metaHash: "m", text: pk, metadata: {}, vector });
    await store.upsert("vt_a", [row("100", same!), row("9", same!), row("25", same!), row("7", other!), row("10", same!)]);
    const { hits } = await store.search("vt_a", { vector: same!, k: 3 });
    expect(pks(hits)).toEqual(["9", "10", "25"]);
    await store.createCollection("vt_b", { ...SPEC, numericPk: false });
    await store.upsert("vt_b", [row("100", same!), row("9", same!), row("25", same!)]);
    expect(pks((await store.search("vt_b", { vector: same!, k: 2 })).hits)).toEqual(["100", "25"]);
  });

  test("min score keeps only results at or above it", async () => {
    await using w = await makeWorld(memory);
    const store = await w.open();
    await store.createCollection("vt_a", SPEC);
    const rows = productRows(200, SPEC.dimensions);
    await store.upsert("vt_a", rows);
    const { hits } = await store.search("vt_a", { vector: rows[0]!.vector, k: 100, minScore: 0.5 });
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.length).toBeLessThan(100);
    expect(hits.every((h) => h.score >= 0.5)).toBe(true);
  });

  test("HNSW path with oversampling: filtered results exact w.r.t. the filter, high recall", async () => {
    await using w = await makeWorld(memory);
    const store = await w.open({ index: { threads: 1 } });
    await store.createCollection("vt_a", SPEC);
    // 3,000 rows: past the unfiltered exact limit (2,048); the exact cap for k=10 is ~1,080 matches
    const rows = productRows(3000, SPEC.dimensions);
    await store.upsert("vt_a", rows);
    let recall = 0;
    for (const q of queries) {
      const broad = await store.search("vt_a", { vector: q, k: 10, filter: { active: { neq: false } } });
      expect(broad.path).toBe("hnsw");
      expect(broad.hits.every((h) => h.metadata.active !== false)).toBe(true);
      recall += overlap(pks(broad.hits), referenceTopK(rows, q, 10, (m) => m.active !== false));
      const plain = await store.search("vt_a", { vector: q, k: 10 });
      expect(plain.path).toBe("hnsw");
      recall += overlap(pks(plain.hits), referenceTopK(rows, q, 10));
      const narrow = await store.search("vt_a", { vector: q, k: 10, filter: { stock: 7 } });
      expect(narrow.path).toBe("exact-memory");
      expect(pks(narrow.hits)).toEqual(referenceTopK(rows, q, 10, (m) => m.stock === 7));
    }
    // 16-dim noisy data is hard for HNSW; the benchmark measures recall on realistic sizes
    expect(recall / (queries.length * 2)).toBeGreaterThanOrEqual(0.93);
  });

  test("delete, metadata-only update and re-upsert are reflected in search, count and hashes", async () => {
    await using w = await makeWorld(memory);
    const store = await w.open();
    await store.createCollection("vt_a", SPEC);
    const rows = productRows(50, SPEC.dimensions);
    await store.upsert("vt_a", rows);
    expect(await store.delete("vt_a", ["3", "4", "nope"])).toBe(2);
    expect(await store.count("vt_a")).toBe(48);
    expect((await store.search("vt_a", { vector: rows[3]!.vector, k: 1 })).hits[0]!.pk).not.toBe("3");
    expect(await store.updateMetadata("vt_a", [{ pk: "5", metaHash: "m5b", metadata: { category: "toys", price: 1.5, stock: 2, active: true } }])).toBe(1);
    const hit = (await store.search("vt_a", { vector: rows[5]!.vector, k: 1, filter: { category: "toys" } })).hits[0]!;
    expect(hit).toMatchObject({ pk: "5", text: "product 5", metadata: { category: "toys", price: 1.5, stock: 2, active: true } });
    expect(await store.count("vt_a", { category: "toys" })).toBe(1);
    await store.upsert("vt_a", [{ ...rows[6]!, text: "moved", vector: rows[0]!.vector }]);
    const top = (await store.search("vt_a", { vector: rows[0]!.vector, k: 2 })).hits;
    expect(pks(top).sort()).toEqual(["0", "6"]);
    expect(await store.hashes("vt_a", { pks: ["5", "3"] })).toEqual([{ pk: "5", textHash: "t5", metaHash: "m5b" }]);
    const page = await store.hashes("vt_a", { limit: 3 });
    expect(page.map((h) => h.pk)).toEqual(["0", "1", "10"]);
    expect((await store.hashes("vt_a", { afterPk: "10", limit: 1 }))[0]!.pk).toBe("11");
  });

  test("the SQL exact path (libSQL vector functions) agrees with the in-memory one", async () => {
    await using w = await makeWorld(memory);
    const store = await w.open();
    await store.createCollection("vt_a", SPEC);
    const rows = productRows(300, SPEC.dimensions);
    await store.upsert("vt_a", rows);
    await store.close();
    const reopened = await w.open({ exactCapScale: 1e9 });
    const first = await reopened.search("vt_a", { vector: queries[1]!, k: 10, filter: { stock: { lt: 20 } } });
    expect(first.path).toBe("exact-sql"); // the mirror is still loading
    await reopened.whenReady("vt_a");
    const again = await reopened.search("vt_a", { vector: queries[1]!, k: 10, filter: { stock: { lt: 20 } } });
    expect(again.path).toBe("exact-memory");
    expect(pks(first.hits)).toEqual(pks(again.hits));
    first.hits.forEach((h, i) => expect(h.score).toBeCloseTo(again.hits[i]!.score, 5));
  });

  test("stats report rows, bytes and sequences", async () => {
    await using w = await makeWorld(memory);
    const store = await w.open();
    await store.createCollection("vt_a", SPEC);
    await store.upsert("vt_a", productRows(100, SPEC.dimensions));
    await store.checkpoint("vt_a");
    const stats = await store.stats("vt_a");
    expect(stats).toMatchObject({ rows: 100, dimensions: 16, status: "ready", changeSeq: 1, checkpointSeq: 1, generation: 1 });
    expect(stats.sqlBytes).toBeGreaterThan(100 * 64);
    expect(stats.memoryBytes).toBeGreaterThan(100 * 64);
  });
});

describe("errors", () => {
  test("a bad filter throws FilterError with details", async () => {
    await using w = await makeWorld();
    const store = await w.open();
    await store.createCollection("vt_a", SPEC);
    const err = await store.search("vt_a", { vector: queries[0]!, k: 3, filter: { colour: "red" } }).catch((e) => e);
    expect(err).toBeInstanceOf(FilterError);
    expect(err.details).toEqual([{ path: "filters.colour", message: 'unknown filter column "colour"' }]);
  });

  test("rows that do not fit the collection are refused before any write", async () => {
    await using w = await makeWorld();
    const store = await w.open();
    await store.createCollection("vt_a", SPEC);
    const [row] = productRows(1, SPEC.dimensions);
    const bad: UpsertRow[] = [
      { ...row!, vector: new Float32Array(3).fill(1) },
      { ...row!, vector: new Float32Array(16) },
      { ...row!, metadata: { stock: 1.5 } },
      { ...row!, metadata: { colour: "red" } },
    ];
    for (const r of bad) expect(store.upsert("vt_a", [r])).rejects.toBeInstanceOf(VectorStoreError);
    expect(await store.count("vt_a")).toBe(0);
  });

  test("unknown collection, duplicate collection, bad names", async () => {
    await using w = await makeWorld();
    const store = await w.open();
    await store.createCollection("vt_a", SPEC);
    expect(store.createCollection("vt_a", SPEC)).rejects.toMatchObject({ code: "collection_exists" });
    expect(store.search("vt_x", { vector: queries[0]!, k: 1 })).rejects.toMatchObject({ code: "collection_not_found" });
    expect(store.createCollection('vt"; drop', SPEC)).rejects.toMatchObject({ code: "invalid_name" });
  });
});
