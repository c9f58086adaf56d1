// SearchRequest.explain (docs/vector-tables.md#explain): the figures a search reports agree with
// the path the planner took, and a search not asked to explain reports nothing.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { VectorStore } from "../../../../src/drivers/vector-store/index.ts";
import { bandFor } from "../../../../src/drivers/vector-store/planner.ts";
import type { Metadata, UpsertRow } from "../../../../src/drivers/store-api/index.ts";
import { clusteredVectors, makeWorld, productRows, SPEC, type World } from "../helpers.ts";

// Builds a 5,000-row HNSW index and calibrates it: slower than bun's 5 s default on a loaded machine.
setDefaultTimeout(60_000);

const queries = clusteredVectors(5, SPEC.dimensions, 99);
const MIRRORS = [["f32", {}], ["compact", { floatMirrorBytes: 0 }]] as const;

/** productRows with every 200th row in category `rare`: a keyword filter matching few rows. */
function rows(n: number): UpsertRow[] {
  return productRows(n, SPEC.dimensions).map((r, i) => (i % 200 === 0 ? { ...r, metadata: { ...r.metadata, category: "rare" } } : r));
}
const matching = (all: UpsertRow[], keep: (m: Metadata) => boolean) => all.filter((r) => keep(r.metadata)).length;

describe.each(MIRRORS)("exact paths, %s mirror", (_, memory) => {
  test("without explain, or with explain false, a result has no explain", async () => {
    await using w = await makeWorld(memory);
    const store = await w.open();
    await store.createCollection("c", SPEC);
    await store.upsert("c", rows(300));
    expect(Object.keys(await store.search("c", { vector: queries[0]!, k: 5 })).sort()).toEqual(["hits", "path"]);
    expect("explain" in (await store.search("c", { vector: queries[0]!, k: 5, explain: false }))).toBe(false);
  });

  test("unfiltered on a small collection: every live row scored, recall 1", async () => {
    await using w = await makeWorld(memory);
    const store = await w.open();
    await store.createCollection("c", SPEC);
    await store.upsert("c", rows(300));
    const found = await store.search("c", { vector: queries[0]!, k: 10, explain: true });
    expect(found.path).toBe("exact-memory");
    expect(found.explain).toEqual({ estimatedMatches: 300, candidatesExamined: 300, expectedRecall: 1 });
  });

  test("a selective keyword filter: its exact count, the matching rows scored; a broad one scanned from its column order likewise", async () => {
    await using w = await makeWorld(memory);
    const store = await w.open({ exactCapScale: 1e9 });
    await store.createCollection("c", SPEC);
    const all = rows(3000);
    await store.upsert("c", all);
    await store.whenReady("c");
    const rare = matching(all, (m) => m.category === "rare");
    const selective = await store.search("c", { vector: queries[1]!, k: 10, filter: { category: "rare" }, explain: true });
    expect(selective.path).toBe("exact-memory");
    expect(selective.explain).toEqual({ estimatedMatches: rare, candidatesExamined: rare, expectedRecall: 1 });
    // ~850 rows, every one scored: from the column order once writes have paused, else from the column (search.ts run)
    const books = matching(all, (m) => m.category === "books");
    const broad = await store.search("c", { vector: queries[1]!, k: 10, filter: { category: "books" }, explain: true });
    expect(broad.path).toBe("exact-memory");
    expect(broad.explain).toEqual({ estimatedMatches: books, candidatesExamined: books, expectedRecall: 1 });
  });

  test("a collection still loading: the SQL path, every matching row counted", async () => {
    await using w = await makeWorld(memory);
    const first = await w.open();
    await first.createCollection("c", SPEC);
    const all = rows(300);
    await first.upsert("c", all);
    await first.close();
    const store = await w.open();
    const found = await store.search("c", { vector: queries[1]!, k: 10, filter: { stock: { lt: 20 } }, explain: true });
    expect(found.path).toBe("exact-sql");
    const lt20 = matching(all, (m) => m.stock !== null && (m.stock as number) < 20);
    expect(found.explain).toEqual({ estimatedMatches: lt20, candidatesExamined: lt20, expectedRecall: 1 });
  });

  test("an empty collection: nothing estimated or examined", async () => {
    await using w = await makeWorld(memory);
    const store = await w.open();
    await store.createCollection("c", SPEC);
    expect(await store.search("c", { vector: queries[0]!, k: 10, explain: true })).toEqual({ hits: [], path: "empty", explain: { estimatedMatches: 0, candidatesExamined: 0, expectedRecall: 1 } });
  });
});

describe("HNSW", () => {
  const N = 5000;
  const all = rows(N);
  let w: World;
  let store: VectorStore;
  beforeAll(async () => {
    w = await makeWorld();
    // No column orders (they would count a range filter exactly): the filter below is sampled.
    store = await w.open({ orderQuietMs: 1e9 });
    await store.createCollection("c", SPEC);
    await store.upsert("c", all);
    await store.whenReady("c");
  });
  afterAll(() => w[Symbol.asyncDispose]());

  const broad = { stock: { gte: 10 } };
  const broadCount = matching(all, (m) => m.stock !== null && (m.stock as number) >= 10);

  test("unfiltered: the index's candidates (≥ k, far fewer than the rows); recall unknown until measured, then the measured one", async () => {
    const before = await store.search("c", { vector: queries[2]!, k: 10, explain: true });
    expect(before.path).toBe("hnsw");
    expect(before.explain!.estimatedMatches).toBe(N);
    expect(before.explain!.candidatesExamined).toBeGreaterThanOrEqual(10);
    expect(before.explain!.candidatesExamined).toBeLessThan(N / 4);
    expect(before.explain!.expectedRecall).toBeNull();
    const filtered = await store.search("c", { vector: queries[2]!, k: 10, filter: broad, explain: true });
    expect(filtered.path).toBe("hnsw");
    expect(filtered.explain!.expectedRecall).toBeNull();

    const cal = (await store.calibrate("c"))!;
    expect(cal.unfiltered).toBeGreaterThan(0);
    expect(cal.unfiltered).toBeLessThanOrEqual(1);
    const after = await store.search("c", { vector: queries[2]!, k: 10, explain: true });
    expect(after.path).toBe("hnsw");
    expect(after.explain!.expectedRecall).toBe(cal.unfiltered!);
  });

  test("a broad sampled filter: an estimate near the true count; recall as the calibration's band for it, or 1 when exact", async () => {
    const cal = (await store.calibrate("c"))!;
    const found = await store.search("c", { vector: queries[3]!, k: 10, filter: broad, explain: true });
    const { estimatedMatches, candidatesExamined, expectedRecall } = found.explain!;
    expect(Math.abs(estimatedMatches - broadCount) / broadCount).toBeLessThan(0.1);
    expect(candidatesExamined).toBeGreaterThanOrEqual(10);
    if (found.path === "hnsw") {
      const band = bandFor(cal, estimatedMatches / N)!;
      expect(band.choice).not.toBe("exact");
      expect(expectedRecall).toBe(band.recall);
    } else {
      expect([found.path, expectedRecall]).toEqual(["exact-memory", 1]);
    }
  });

  test("a very selective filter: exact, its count estimated exactly, those rows scored", async () => {
    const rare = matching(all, (m) => m.category === "rare");
    const found = await store.search("c", { vector: queries[4]!, k: 10, filter: { category: "rare" }, explain: true });
    expect(found.path).toBe("exact-memory");
    expect(found.explain).toEqual({ estimatedMatches: rare, candidatesExamined: rare, expectedRecall: 1 });
  });
});

test("an explained search starts the calibration when it is missing; one not explained does not", async () => {
  await using w = await makeWorld();
  const events: string[] = [];
  const store = await w.open({ autoCalibrate: true, log: (event) => events.push(event) });
  await store.createCollection("c", SPEC);
  await store.upsert("c", rows(3000));
  await store.whenReady("c");
  await store.search("c", { vector: queries[0]!, k: 10 });
  await Bun.sleep(50);
  expect(events).not.toContain("vector_store.calibrated");
  await store.search("c", { vector: queries[0]!, k: 10, explain: true });
  const deadline = Date.now() + 30_000;
  while (!events.includes("vector_store.calibrated") && Date.now() < deadline) await Bun.sleep(20);
  const found = await store.search("c", { vector: queries[0]!, k: 10, explain: true });
  expect(found.path).toBe("hnsw");
  expect(found.explain!.expectedRecall).toBeGreaterThan(0);
});
