// Keyword and hybrid search in the managed store against brute force (keyword-reference.ts):
// BM25 ranking and scores, filters, min score, k whenever k rows qualify, writes, a generation
// swap, a reopen, a store from before the keyword index, and a kill -9.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import type { VectorStore, VectorStoreOptions } from "../../../src/drivers/vector-store/index.ts";
import { hybridDepth, type Metadata, type SearchHit, type UpsertRow } from "../../../src/drivers/store-api/index.ts";
import { applyScript, CRASH_ROWS } from "./fixtures/script.ts";
import { clusteredVectors, makeWorld, productRows, rng, SPEC } from "./helpers.ts";
import { hybridReference, keywordReference, type Ranked, vectorReference } from "./keyword-reference.ts";

setDefaultTimeout(30_000);

const VOCAB = ["river", "stone", "amber", "falcon", "harbor", "lantern", "meadow", "quartz", "willow", "ember"];
/** Word i is drawn with weight 1/(i+1): some words are in most rows (IDF at its floor), some in few. */
function textOf(seed: number): string {
  const rand = rng(seed);
  const length = 2 + Math.floor(rand() * 14);
  const total = VOCAB.reduce((s, _, i) => s + 1 / (i + 1), 0);
  const out: string[] = [];
  for (let j = 0; j < length; j++) {
    let x = rand() * total;
    let i = 0;
    while (x > 1 / (i + 1) && i < VOCAB.length - 1) x -= 1 / ++i;
    out.push(rand() < 0.2 ? VOCAB[i]!.toUpperCase() : VOCAB[i]!);
  }
  return out.join(rand() < 0.5 ? " " : ", ");
}

function keywordRows(n: number, seed = 3, offset = 0): UpsertRow[] {
  return productRows(n, SPEC.dimensions, seed, offset).map((r, i) => ({ ...r, text: textOf(seed * 1000 + i + offset) }));
}

const QUERIES = ["quartz willow", "river", "ember falcon meadow", "Amber, LANTERN!", "nothing matches here", "river river stone"];
const vectors = clusteredVectors(QUERIES.length, SPEC.dimensions, 11);
const FILTERS: [unknown, (m: Metadata) => boolean][] = [
  [undefined, () => true],
  [{ category: "books" }, (m) => m.category === "books"],
  [{ stock: { gte: 10 } }, (m) => m.stock !== null && (m.stock as number) >= 10],
];

function expectKeyword(hits: SearchHit[], want: Ranked[]): void {
  expect(hits.map((h) => h.pk)).toEqual(want.map((r) => r.pk));
  hits.forEach((h, i) => {
    expect(h.keywordScore!).toBeCloseTo(want[i]!.keywordScore!, 9);
    expect(h.rankScore).toBe(h.keywordScore!);
    expect(h.score).toBeCloseTo(want[i]!.similarity, 5);
  });
}

async function expectKeywordAnswers(store: VectorStore, name: string, rows: UpsertRow[], k = 10): Promise<void> {
  await store.keywordReady(name); // in memory where the mirror can hold it, else FTS5: each variant its own path
  // The texts reach both sides of FTS5's IDF floor (a word in half the rows or more), or the test proves less.
  const scores = QUERIES.flatMap((q, qi) => keywordReference(rows, q, vectors[qi]!).map((r) => r.keywordScore!));
  expect(scores.some((s) => s < 1e-5) && scores.some((s) => s > 0.5)).toBe(true);
  for (const [qi, text] of QUERIES.entries()) {
    for (const [filter, keep] of FILTERS) {
      const { hits, path } = await store.search(name, { vector: vectors[qi]!, k, filter, mode: "keyword", text });
      expect(path).toBe("keyword");
      expectKeyword(hits, keywordReference(rows, text, vectors[qi]!, keep).slice(0, k));
    }
  }
}

// A ready generation ranks in memory; a compact one (and one loading) in libSQL's FTS5: both are held to the reference.
const MIRRORS: [string, Partial<VectorStoreOptions>][] = [
  ["in memory", {}],
  ["FTS5 (compact mirror)", { floatMirrorBytes: 0 }],
];

describe.each(MIRRORS)("keyword, %s", (_, options) => {
  test("ranking and BM25 scores equal brute force, with filters and min score", async () => {
    await using world = await makeWorld(options);
    const store = await world.open();
    const rows = keywordRows(80);
    await store.createCollection("kw", SPEC);
    await store.upsert("kw", rows);
    expect(await store.keywordReady("kw")).toBe(options.floatMirrorBytes === undefined);
    await expectKeywordAnswers(store, "kw", rows);
    await expectKeywordAnswers(store, "kw", rows, 100);
    const { hits } = await store.search("kw", { vector: vectors[0]!, k: 10, mode: "keyword", text: QUERIES[0], minScore: 0.2 });
    expectKeyword(hits, keywordReference(rows, QUERIES[0]!, vectors[0]!, () => true, 0.2).slice(0, 10));
  });

  test("query texts: FTS5 syntax is only words; no words is an empty answer; diacritics and case fold", async () => {
    await using world = await makeWorld(options);
    const store = await world.open();
    await store.createCollection("kw", SPEC);
    await store.upsert("kw", [{ ...productRows(1, SPEC.dimensions)[0]!, text: "Café au lait" }]);
    for (const text of ['"unbalanced', "NEAR(x, y)", "a OR", "*", "col:value", "-"]) {
      await store.search("kw", { vector: vectors[0]!, k: 5, mode: "keyword", text });
    }
    await store.keywordReady("kw");
    expect((await store.search("kw", { vector: vectors[0]!, k: 5, mode: "keyword", text: "?!" })).hits).toEqual([]);
    expect((await store.search("kw", { vector: vectors[0]!, k: 5, mode: "keyword", text: "CAFE" })).hits.map((h) => h.pk)).toEqual(["0"]);
  });

  test("a selective filter still answers k when k rows qualify", async () => {
    await using world = await makeWorld(options);
    const store = await world.open();
    // 400 rows say "common"; the 12 with category "rare" are among the weakest matches (long texts).
    const rows = productRows(400, SPEC.dimensions, 5).map((r, i) => ({
      ...r,
      text: i % 33 === 0 ? `common ${"filler ".repeat(30)}` : "common common",
      metadata: { ...r.metadata, category: i % 33 === 0 ? "rare" : "usual" },
    }));
    await store.createCollection("kw", SPEC);
    await store.upsert("kw", rows);
    await store.keywordReady("kw");
    const { hits } = await store.search("kw", { vector: vectors[0]!, k: 10, filter: { category: "rare" }, mode: "keyword", text: "common" });
    expect(hits.length).toBe(10);
    expectKeyword(hits, keywordReference(rows, "common", vectors[0]!, (m) => m.category === "rare").slice(0, 10));
  });

  test("deletes, text updates and metadata updates are reflected", async () => {
    await using world = await makeWorld(options);
    const store = await world.open();
    let rows = keywordRows(60);
    await store.createCollection("kw", SPEC);
    await store.upsert("kw", rows);
    await store.delete("kw", ["3", "7", "11"]);
    const changed = rows.filter((r) => Number(r.pk) % 5 === 0).map((r) => ({ ...r, text: textOf(99_000 + Number(r.pk)) }));
    await store.upsert("kw", changed);
    await store.updateMetadata("kw", [{ pk: "12", metaHash: "x", metadata: { category: "books" } }]);
    rows = rows.filter((r) => !["3", "7", "11"].includes(r.pk)).map((r) => changed.find((c) => c.pk === r.pk) ?? r);
    rows = rows.map((r) => (r.pk === "12" ? { ...r, metadata: { category: "books" } } : r));
    await expectKeywordAnswers(store, "kw", rows);
    const idx = `"vs_kw__g1__words"`;
    await world.client.execute(`INSERT INTO ${idx} (${idx}) VALUES ('integrity-check')`);
  });
});

describe.each(MIRRORS)("hybrid, %s", (_, options) => {
  test.each([0.3, 0.8])("order and rank scores equal brute-force weighted RRF (w = %p)", async (w) => {
    await using world = await makeWorld(options);
    const store = await world.open();
    const rows = keywordRows(80);
    await store.createCollection("kw", SPEC);
    await store.upsert("kw", rows);
    await store.keywordReady("kw");
    for (const [qi, text] of QUERIES.entries()) {
      for (const [filter, keep] of FILTERS) {
        const { hits, path } = await store.search("kw", { vector: vectors[qi]!, k: 10, filter, mode: "hybrid", text, vectorWeight: w });
        expect(path).toBe("hybrid");
        const want = hybridReference(rows, text, vectors[qi]!, w, hybridDepth(10), keep).slice(0, 10);
        expect(hits.map((h) => h.pk)).toEqual(want.map((r) => r.pk));
        hits.forEach((h, i) => {
          expect(h.rankScore!).toBeCloseTo(want[i]!.rankScore, 12);
          expect(h.score).toBeCloseTo(want[i]!.similarity, 5);
          if (want[i]!.keywordScore === null) expect(h.keywordScore).toBeNull();
          else expect(h.keywordScore!).toBeCloseTo(want[i]!.keywordScore!, 9);
        });
      }
    }
  });

  test("vector mode given: cosine order, with keyword scores; absent mode: no new fields", async () => {
    await using world = await makeWorld(options);
    const store = await world.open();
    const rows = keywordRows(50);
    await store.createCollection("kw", SPEC);
    await store.upsert("kw", rows);
    await store.keywordReady("kw");
    const { hits } = await store.search("kw", { vector: vectors[0]!, k: 10, mode: "vector", text: QUERIES[0] });
    const want = vectorReference(rows, QUERIES[0]!, vectors[0]!).slice(0, 10);
    expect(hits.map((h) => h.pk)).toEqual(want.map((r) => r.pk));
    hits.forEach((h, i) => {
      expect(h.rankScore).toBe(h.score);
      if (want[i]!.keywordScore === null) expect(h.keywordScore).toBeNull();
      else expect(h.keywordScore!).toBeCloseTo(want[i]!.keywordScore!, 9);
    });
    const plain = await store.search("kw", { vector: vectors[0]!, k: 3 });
    expect(Object.keys(plain.hits[0]!).sort()).toEqual(["metadata", "pk", "score", "text"]);
  });
});

describe("lifecycle", () => {
  test("a re-backfill into a new generation and its swap keep keyword answers right", async () => {
    await using world = await makeWorld();
    const store = await world.open();
    await store.createCollection("kw", SPEC);
    await store.upsert("kw", keywordRows(60));
    const next = keywordRows(70, 8);
    const generation = await store.createGeneration("kw", SPEC);
    await store.upsert("kw", next, { generation });
    await store.swapGeneration("kw", generation);
    await expectKeywordAnswers(store, "kw", next);
    const tables = await world.client.execute("SELECT name FROM sqlite_master WHERE name LIKE 'vs_kw__g1__words%'");
    expect(tables.rows.length).toBe(0);
  });

  test("after close and reopen, and in a store made before the keyword index", async () => {
    await using world = await makeWorld();
    const rows = keywordRows(60);
    const first = await world.open();
    await first.createCollection("kw", SPEC);
    await first.upsert("kw", rows);
    await first.close();
    await expectKeywordAnswers(await world.open(), "kw", rows);
    await world.client.execute(`DROP TABLE "vs_kw__g1__words"`);
    const events: string[] = [];
    const again = await world.open({ log: (e) => events.push(e) });
    expect(events).toContain("vector_store.keyword_index_built");
    await expectKeywordAnswers(again, "kw", rows);
  });

  test("kill -9 between an upsert and a checkpoint: keyword answers equal brute force after the restart", async () => {
    await using crashed = await makeWorld();
    const child = Bun.spawn([process.execPath, join(import.meta.dir, "fixtures/crash-writer.ts"), crashed.dbUrl, crashed.indexDir], { stdout: "pipe", stderr: "inherit" });
    const first = await child.stdout.getReader().read();
    expect(new TextDecoder().decode(first.value)).toBe("ready\n");
    child.kill("SIGKILL");
    await child.exited;
    const restarted = await crashed.open();
    // The rows the script leaves (fixtures/script.ts).
    const gone = new Set(["1", "2", "20", "400"]);
    const rows = CRASH_ROWS.filter((r) => !gone.has(r.pk)).map((r) => (r.pk === "10" ? { ...r, vector: CRASH_ROWS[500]!.vector, text: "moved" } : r.pk === "30" ? { ...r, metadata: { category: "crashed" } } : r));
    for (const text of ["product 33 400 10", "moved", "product", "599 1 20"]) {
      for (const [filter, keep] of [...FILTERS, [{ category: "crashed" }, (m: Metadata) => m.category === "crashed"]] as typeof FILTERS) {
        const { hits } = await restarted.search("vt_crash", { vector: vectors[0]!, k: 10, filter, mode: "keyword", text });
        expectKeyword(hits, keywordReference(rows, text, vectors[0]!, keep).slice(0, 10));
      }
    }
    await using clean = await makeWorld();
    const reference = await clean.open();
    await applyScript(reference, async () => {});
    const a = await restarted.search("vt_crash", { vector: vectors[1]!, k: 10, mode: "hybrid", text: "product 77 moved" });
    const b = await reference.search("vt_crash", { vector: vectors[1]!, k: 10, mode: "hybrid", text: "product 77 moved" });
    expect(a.hits.map((h) => [h.pk, h.keywordScore])).toEqual(b.hits.map((h) => [h.pk, h.keywordScore]));
  });
});
