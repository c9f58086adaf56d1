// The behaviours every PlatformVectorStore shares (STYLE 7: one suite, each store lists what it
// skips and why), written against the interface alone so it can join the managed/pgvector
// contract: rows, hashes, counts, exact filtered search against a brute-force reference, ties,
// min score, drop, generations and their swap under concurrent searches, and the errors.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { PlatformVectorStore } from "../../../src/drivers/platform/types.ts";
import { compilePredicate, FilterError, parseFilter, type GenerationSpec, type Metadata, type SearchHit, type UpsertRow } from "../../../src/drivers/vector-store/index.ts";
import { cosine, productRows, rng, SPEC } from "../vector-store/helpers.ts";

export interface StoreWorld {
  store: PlatformVectorStore;
  /** A ref of its own for `key` (lowercase letters and digits, at most 8). */
  ref(key: string): string;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Behaviours a store may skip, saying why where it calls the suite. */
export type StoreBehaviour = "hashes-code-point-pages";

const unit = (...xs: number[]) => Float32Array.from(xs);
const row = (pk: string, vector: Float32Array, metadata: Metadata = {}, text = `row ${pk}`): UpsertRow => ({ pk, textHash: `t-${text}`, metaHash: `m-${JSON.stringify(metadata)}`, text, metadata, vector });
const tagged = (rows: UpsertRow[], tag: string) => rows.map((r) => ({ ...r, text: `${tag} ${r.pk}` }));
/** Generation 2 changes the shape: the same column name with another type, and fewer columns. */
const SPEC2: GenerationSpec = { dimensions: 16, numericPk: true, metadata: [{ name: "category", type: "integer" }] };

export function platformStoreContract(name: string, open: () => Promise<StoreWorld>, skip: StoreBehaviour[] = []) {
  describe(`${name}: platform store contract`, () => {
    let world: StoreWorld;
    beforeAll(async () => {
      world = await open();
    });
    afterAll(async () => {
      await world?.[Symbol.asyncDispose]();
    });

    test("ensureTable is idempotent; rows upsert (last wins), update metadata, hash, count and delete", async () => {
      const { store } = world;
      const ref = world.ref("rows");
      await store.ensureTable(ref, SPEC);
      await store.ensureTable(ref, SPEC);
      expect(await store.hasTable(ref)).toBe(true);
      expect(await store.generations(ref)).toMatchObject({ live: 1, building: [] });
      const rows = productRows(30, 16, 3);
      await store.upsert(ref, rows);
      expect(await store.count(ref)).toBe(30);
      await store.upsert(ref, [{ ...rows[0]!, text: "replaced", textHash: "t-new" }, { ...rows[0]!, text: "replaced twice", textHash: "t-newer" }]);
      expect(await store.count(ref)).toBe(30);
      expect(await store.hashes(ref, { pks: ["0", "1", "nope"] })).toEqual([
        { pk: "0", textHash: "t-newer", metaHash: "m0" },
        { pk: "1", textHash: "t1", metaHash: "m1" },
      ]);
      const docs = await store.docs(ref, ["0", "2"]);
      expect(docs.get("0")!.text).toBe("replaced twice");
      expect(Array.from(docs.get("2")!.vector)).toEqual(Array.from(rows[2]!.vector));
      if (!skip.includes("hashes-code-point-pages")) {
        // Paging in pk code point order: "0" < "1" < "10" < … < "2" < "20" …
        expect((await store.hashes(ref, { limit: 4 })).map((h) => h.pk)).toEqual(["0", "1", "10", "11"]);
        expect((await store.hashes(ref, { afterPk: "11", limit: 3 })).map((h) => h.pk)).toEqual(["12", "13", "14"]);
      }
      const updated = await store.updateMetadata(ref, [
        { pk: "1", metaHash: "m1b", metadata: { category: "zzz", price: 1.25, stock: 9007199254740991, active: true } },
        { pk: "missing", metaHash: "x", metadata: {} },
      ]);
      expect(updated).toBe(1);
      expect(await store.hashes(ref, { pks: ["1"] })).toEqual([{ pk: "1", textHash: "t1", metaHash: "m1b" }]);
      const hit = (await store.search(ref, { vector: rows[1]!.vector, k: 1, filter: { category: "zzz" } })).hits[0]!;
      expect(hit).toMatchObject({ pk: "1", metadata: { category: "zzz", price: 1.25, stock: 9007199254740991, active: true }, text: "product 1" });
      expect(hit.score).toBeCloseTo(1, 5);
      expect(await store.count(ref, { category: "zzz" })).toBe(1);
      expect(await store.delete(ref, ["1", "2", "nope"])).toBe(2);
      expect(await store.count(ref)).toBe(28);
      expect(await store.delete(ref, [])).toBe(0);
    });

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

    test("search matches a brute-force reference for every operator, $or, nulls and min score", async () => {
      const { store } = world;
      const ref = world.ref("search");
      await store.ensureTable(ref, SPEC);
      const rows = productRows(300, 16, 11);
      await store.upsert(ref, rows);
      const filters: unknown[] = [
        undefined,
        { category: "books" },
        { category: { neq: "books" } },
        { category: ["books", "tools"] },
        { category: { nin: ["books", "games"] } },
        { category: { exists: false } },
        { price: { exists: true }, stock: { gte: 10, lt: 20 } },
        { price: { gt: 50.5 } },
        { price: { gte: 10, lte: 10.5 } },
        { stock: { gt: 47.5 } },
        { stock: { neq: 3 } },
        { stock: { nin: [1, 2, 3] } },
        { active: true },
        { active: { neq: true } },
        { $or: [{ category: "tools", active: false }, { stock: { lt: 2 } }] },
        { $or: [{ price: { exists: false } }, { $or: [{ category: { exists: false } }, { stock: 49 }] }] },
        { category: { in: [] } },
      ];
      const rand = rng(77);
      const queries = [rows[3]!.vector, Float32Array.from({ length: 16 }, () => rand() * 2 - 1)];
      for (const filter of filters) {
        const keep = compilePredicate<Metadata>(parseFilter(filter, SPEC.metadata), (c) => (m) => m[SPEC.metadata[c]!.name] ?? null);
        for (const [qi, vector] of queries.entries()) {
          for (const k of [1, 25]) {
            const minScore = qi === 1 ? 0.2 : null;
            const { hits } = await store.search(ref, { vector, k, filter, minScore });
            expectSameRanking(hits, reference(rows, vector, k, keep, minScore), `${JSON.stringify(filter)} q${qi} k${k}`);
            for (const h of hits) expect(keep(h.metadata)).toBe(true);
          }
        }
        expect(await store.count(ref, filter)).toBe(rows.filter((r) => keep(r.metadata)).length);
      }
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

    test("min score keeps hits at or above it; score is 1 − cosine distance", async () => {
      const { store } = world;
      const ref = world.ref("minscore");
      await store.ensureTable(ref, { dimensions: 2, numericPk: true, metadata: [] });
      await store.upsert(ref, [row("1", unit(1, 0)), row("2", unit(1, 1)), row("3", unit(0, 1)), row("4", unit(-1, 0))]);
      const all = await store.search(ref, { vector: unit(1, 0), k: 10 });
      expect(all.hits.map((h) => h.pk)).toEqual(["1", "2", "3", "4"]);
      expect(all.hits.map((h) => Math.round(h.score * 1e6) / 1e6)).toEqual([1, 0.707107, 0, -1]);
      expect((await store.search(ref, { vector: unit(1, 0), k: 10, minScore: 0.7 })).hits.map((h) => h.pk)).toEqual(["1", "2"]);
      expect((await store.search(ref, { vector: unit(1, 0), k: 10, minScore: 1.01 })).hits).toEqual([]);
    });

    test("dropTable removes the table and its building generations; dropping twice is fine", async () => {
      const { store } = world;
      const ref = world.ref("drop");
      await store.ensureTable(ref, SPEC);
      await store.createGeneration(ref, SPEC);
      await store.dropTable(ref);
      await store.dropTable(ref);
      expect(await store.hasTable(ref)).toBe(false);
      await expect(store.search(ref, { vector: new Float32Array(16).fill(1), k: 1 })).rejects.toMatchObject({ code: "collection_not_found" });
      await store.ensureTable(ref, SPEC);
      expect(await store.generations(ref)).toMatchObject({ live: 1, building: [] });
    });

    test("writes go to the named generation; the swap makes it live whole under concurrent searches", async () => {
      const { store } = world;
      const ref = world.ref("gens");
      await store.ensureTable(ref, SPEC);
      await store.upsert(ref, tagged(productRows(60, 16, 2), "g1"));
      const g = await store.createGeneration(ref, SPEC2);
      expect(g).toBe(2);
      expect(await store.generations(ref)).toMatchObject({ live: 1, building: [2] });
      const rows2 = tagged(productRows(45, 16, 9), "g2").map((r) => ({ ...r, metadata: { category: Number(r.pk) % 3 } }));
      await store.upsert(ref, rows2, { generation: g });
      expect(await store.count(ref)).toBe(60);
      expect(await store.count(ref, { category: 1 }, { generation: g })).toBe(15);
      expect((await store.docs(ref, ["3"], { generation: g })).get("3")!.text).toBe("g2 3");
      let stop = false;
      const seen = { g1: 0, g2: 0, errors: [] as unknown[] };
      const searcher = async () => {
        while (!stop) {
          try {
            const { hits } = await store.search(ref, { vector: new Float32Array(16).fill(0.1), k: 10 });
            const tags = new Set(hits.map((h) => h.text.split(" ")[0]));
            if (tags.size !== 1) seen.errors.push(new Error(`mixed generations: ${[...tags]}`));
            if (tags.has("g1")) seen.g1++;
            if (tags.has("g2")) seen.g2++;
          } catch (e) {
            seen.errors.push(e);
          }
        }
      };
      const searchers = [searcher(), searcher()];
      while (seen.g1 === 0 && seen.errors.length === 0) await Bun.sleep(10);
      await store.swapGeneration(ref, g);
      while (seen.g2 === 0 && seen.errors.length === 0) await Bun.sleep(10);
      stop = true;
      await Promise.all(searchers);
      expect(seen.errors).toEqual([]);
      expect(await store.generations(ref)).toMatchObject({ live: 2, building: [] });
      expect(await store.count(ref)).toBe(45);
      const { hits } = await store.search(ref, { vector: rows2[4]!.vector, k: 1, filter: { category: 1 } });
      expect(hits[0]).toMatchObject({ pk: "4", text: "g2 4", metadata: { category: 1 } });
      expect(await store.createGeneration(ref, SPEC)).toBe(3);
      await store.dropGeneration(ref, 3);
      const wide = await store.createGeneration(ref, { ...SPEC2, dimensions: 24 });
      await store.upsert(ref, tagged(productRows(3, 24, 1), "g4").map((r) => ({ ...r, metadata: {} })), { generation: wide });
      await store.swapGeneration(ref, wide);
      expect((await store.search(ref, { vector: new Float32Array(24).fill(0.3), k: 10 })).hits.map((h) => h.text).sort()).toEqual(["g4 0", "g4 1", "g4 2"]);
    });

    test("errors: bad filters, bad rows, another shape, missing tables and generations", async () => {
      const { store } = world;
      const ref = world.ref("errors");
      await expect(store.createGeneration(ref, SPEC)).rejects.toMatchObject({ code: "collection_not_found" });
      await expect(store.count(ref)).rejects.toMatchObject({ code: "collection_not_found" });
      await store.ensureTable(ref, SPEC);
      const vector = new Float32Array(16).fill(1);
      const err = await store.search(ref, { vector, k: 1, filter: { nope: 1, category: { gt: 1 } } }).catch((e) => e);
      expect(err).toBeInstanceOf(FilterError);
      expect((err as FilterError).details.length).toBe(2);
      await expect(store.count(ref, { price: { eq: null } })).rejects.toBeInstanceOf(FilterError);
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
}

function reference(rows: UpsertRow[], vector: Float32Array, k: number, keep: (m: Metadata) => boolean, minScore: number | null) {
  return rows
    .filter((r) => keep(r.metadata))
    .map((r) => ({ pk: r.pk, score: cosine(r.vector, vector) }))
    .sort((a, b) => b.score - a.score || Number(a.pk) - Number(b.pk))
    .slice(0, k)
    .filter((r) => minScore === null || r.score >= minScore - 1e-6);
}

/** Stores may score in float32: equal rankings up to ~1e-6 in score (a near-tie may swap places). */
function expectSameRanking(hits: SearchHit[], expected: { pk: string; score: number }[], what: string) {
  const context = `${what}: got ${JSON.stringify(hits.map((h) => h.pk))}, expected ${JSON.stringify(expected.map((e) => e.pk))}`;
  expect(hits.length, context).toBe(expected.length);
  hits.forEach((h, i) => {
    expect(Math.abs(h.score - expected[i]!.score), context).toBeLessThan(1e-5);
    if (i > 0) expect(hits[i - 1]!.score >= h.score, context).toBe(true);
  });
  const near = (pk: string) => expected.some((e) => e.pk === pk) || Math.abs(hits.find((h) => h.pk === pk)!.score - expected[expected.length - 1]!.score) < 1e-5;
  for (const h of hits) expect(near(h.pk), context).toBe(true);
}
