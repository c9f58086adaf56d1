// The contract every vector table store keeps (domains/vector-tables/storage.ts TableStore): the
// managed collection, the pgvector table, the warehouse VECTOR table. The sync engine and the query
// service rely on exactly these behaviours, so a store that passes them can be plugged in.
// A subject gives a fresh, not yet created store per call; `skip` names what it leaves out, and why.
//   storeContract("pgvector", async () => ({ make: …, key: { name: "id", type: "bigint" }, dispose }))
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { PlatformPrimaryKey } from "../../../src/drivers/platform/types.ts";
import { compilePredicate, FilterError, parseFilter, type Metadata, type SearchHit, type UpsertRow } from "../../../src/drivers/store-api/index.ts";
import type { TableSpec, TableStore } from "../../../src/domains/vector-tables/storage.ts";
import { cosine, productRows, rng, SPEC } from "../vector-store/helpers.ts";

export type Behaviour = "lifecycle" | "rows" | "paging" | "search" | "ties" | "generations" | "filters";

export interface StoreSubject {
  /** A new store each call, on a name no other call used; nothing created yet. */
  make(): Promise<TableStore>;
  /** The source key as the subject's platform would type a numeric one (managed: ignored). */
  key: PlatformPrimaryKey;
  /** How far a score may be from the f32 brute force (half-precision storage…). */
  scoreTolerance?: number;
  skip?: Partial<Record<Behaviour, string>>;
  dispose(): Promise<void>;
}

const DIMS = 16;

const numbered = <T>(n: number, value: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => value(i));
/** Five `in`/`nin` lists of 1,000 values (the most one list takes), some of them matching. */
const LONG_LISTS = {
  $or: [{ category: { in: [...numbered(999, (i) => `c${i}`), "books"] } }, { stock: { in: numbered(1000, (i) => i * 3) } }],
  category: { nin: numbered(1000, (i) => `n${i}`) },
  price: { nin: numbered(1000, (i) => i / 4) },
  stock: { nin: numbered(1000, (i) => 1_000_000 + i) },
};

export function storeContract(name: string, open: () => Promise<StoreSubject>): void {
  describe(`TableStore contract: ${name}`, () => {
    let subject: StoreSubject;
    beforeAll(async () => {
      subject = await open();
    });
    afterAll(async () => {
      await subject?.dispose();
    });
    const spec = (): TableSpec => ({ ...SPEC, primaryKey: subject.key, model: "m1" });
    const fresh = async (): Promise<TableStore> => {
      const store = await subject.make();
      await store.create(spec());
      return store;
    };
    const it = (behaviour: Behaviour, title: string, fn: () => Promise<void>) => {
      const why = subject?.skip?.[behaviour];
      test(why ? `${title} (skipped: ${why})` : title, async () => {
        if (!subject.skip?.[behaviour]) await fn();
      });
    };

    it("lifecycle", "create is idempotent; exists; drop removes every generation; dropping twice is fine", async () => {
      const store = await subject.make();
      expect(await store.exists()).toBe(false);
      await store.create(spec());
      await store.create(spec());
      expect(await store.exists()).toBe(true);
      expect(await store.generations()).toEqual({ live: 1, building: [] });
      await store.createGeneration(spec());
      await store.drop();
      await store.drop();
      expect(await store.exists()).toBe(false);
    });

    it("rows", "upsert (last wins), hashes, docs, count, metadata update without touching the vector, delete", async () => {
      const store = await fresh();
      const rows = productRows(40, DIMS, 3);
      await store.upsert([...rows, { ...rows[0]!, text: "twice", textHash: "t-twice" }]);
      expect(await store.count()).toBe(40);
      expect(await store.hashes({ pks: ["0", "1", "999"] })).toEqual([
        { pk: "0", textHash: "t-twice", metaHash: "m0" },
        { pk: "1", textHash: "t1", metaHash: "m1" },
      ]);
      const docs = await store.docs(["0", "2", "999"]);
      expect([...docs.keys()].sort()).toEqual(["0", "2"]);
      expect(docs.get("0")!.text).toBe("twice");
      docs.get("2")!.vector.forEach((x, i) => expect(Math.abs(x - rows[2]!.vector[i]!)).toBeLessThan(1e-3));
      expect(await store.updateMetadata([{ pk: "1", metaHash: "m1b", metadata: { category: "zzz", price: 1.5, stock: 7, active: true } }, { pk: "999", metaHash: "x", metadata: {} }])).toBe(1);
      expect(await store.hashes({ pks: ["1"] })).toEqual([{ pk: "1", textHash: "t1", metaHash: "m1b" }]);
      expect(await store.count({ category: "zzz" })).toBe(1);
      const pin = await store.pin();
      const { hits } = await pin.search({ vector: rows[1]!.vector, k: 1, filter: { category: "zzz" } });
      pin.release();
      expect(hits[0]).toMatchObject({ pk: "1", text: "product 1", metadata: { category: "zzz", price: 1.5, stock: 7, active: true } });
      expect(await store.delete(["1", "2", "999"])).toBe(2);
      expect(await store.count()).toBe(38);
      expect(await store.delete([])).toBe(0);
    });

    it("paging", "hashes page by page after a pk visit every row exactly once", async () => {
      const store = await fresh();
      await store.upsert(productRows(137, DIMS, 5));
      const seen: string[] = [];
      let afterPk: string | undefined;
      for (;;) {
        const page = await store.hashes({ afterPk, limit: 20 });
        if (page.length === 0) break;
        seen.push(...page.map((h) => h.pk));
        afterPk = page[page.length - 1]!.pk;
      }
      expect(seen.length).toBe(137);
      expect(new Set(seen).size).toBe(137);
    });

    it("search", "filtered top-k equals brute force for every operator, $or, nulls, min score; every hit passes the filter", async () => {
      const store = await fresh();
      const rows = productRows(300, DIMS, 11);
      await store.upsert(rows);
      const rand = rng(9);
      const queries = [rows[3]!.vector, Float32Array.from({ length: DIMS }, () => rand() * 2 - 1)];
      const filters: unknown[] = [
        undefined,
        { category: "books" },
        { category: { neq: "books" } },
        { category: { nin: ["books", "games"] } },
        { category: { exists: false } },
        { price: { gte: 10, lt: 60 }, stock: { gt: 3 } },
        { active: { neq: true } },
        { $or: [{ category: "tools", active: false }, { stock: { lt: 2 } }] },
        { category: { in: [] } },
        LONG_LISTS,
      ];
      const pin = await store.pin();
      try {
        expect(pin.spec).toMatchObject({ dimensions: DIMS, model: "m1" });
        for (const filter of filters) {
          const keep = compilePredicate<Metadata>(parseFilter(filter, SPEC.metadata), (c) => (m) => m[SPEC.metadata[c]!.name] ?? null);
          for (const [qi, vector] of queries.entries()) {
            for (const k of [1, 10, 50]) {
              const minScore = qi === 1 ? 0.1 : null;
              const { hits } = await pin.search({ vector, k, filter, minScore });
              for (const h of hits) expect(keep(h.metadata)).toBe(true);
              expectRanking(hits, reference(rows, vector, k, keep, minScore), subject.scoreTolerance ?? 1e-5, `${JSON.stringify(filter)} q${qi} k${k}`);
            }
          }
        }
      } finally {
        pin.release();
      }
    });

    it("ties", "ties in score go by pk numerically, across the k boundary too", async () => {
      const store = await fresh();
      const same = Float32Array.from({ length: DIMS }, (_, i) => (i < 2 ? [0.6, 0.8][i]! : 0));
      const other = Float32Array.from({ length: DIMS }, (_, i) => (i === 2 ? 1 : 0));
      const at = (pk: string, vector: Float32Array): UpsertRow => ({ pk, textHash: "t", metaHash: "m", text: `row ${pk}`, metadata: {}, vector });
      await store.upsert([...["100", "9", "10", "3", "25"].map((pk) => at(pk, same)), at("1", other)]);
      const pin = await store.pin();
      expect((await pin.search({ vector: same, k: 10 })).hits.map((h) => h.pk)).toEqual(["3", "9", "10", "25", "100", "1"]);
      expect((await pin.search({ vector: same, k: 2 })).hits.map((h) => h.pk)).toEqual(["3", "9"]);
      pin.release();
    });

    it("generations", "a building generation is written on the side, swapped in whole (new shape), or dropped; the pin follows the live one", async () => {
      const store = await fresh();
      await store.upsert(productRows(30, DIMS, 2));
      const wide: TableSpec = { dimensions: 24, numericPk: true, metadata: [{ name: "category", type: "integer" }], primaryKey: subject.key, model: "m2" };
      const g = await store.createGeneration(wide);
      expect(await store.generations()).toEqual({ live: 1, building: [g] });
      const rows2 = productRows(12, 24, 4).map((r) => ({ ...r, metadata: { category: Number(r.pk) % 3 } }));
      await store.upsert(rows2, { generation: g });
      expect(await store.count()).toBe(30);
      expect(await store.count({ category: 1 }, { generation: g })).toBe(4);
      expect((await store.hashes({ pks: ["3"], generation: g }))[0]!.textHash).toBe("t3");
      const before = await store.pin();
      before.release(); // a pin held would hold the old generation (managed: its drop waits for it)
      expect(before.spec).toMatchObject({ dimensions: DIMS, model: "m1" });
      await store.swapGeneration(g);
      expect(await store.generations()).toEqual({ live: g, building: [] });
      expect(await store.count()).toBe(12);
      const pin = await store.pin();
      expect(pin).toMatchObject({ generation: g, spec: { dimensions: 24, model: "m2" } });
      expect((await pin.search({ vector: rows2[4]!.vector, k: 1, filter: { category: 1 } })).hits[0]).toMatchObject({ pk: "4", metadata: { category: 1 } });
      pin.release();
      const next = await store.createGeneration(wide);
      expect(next).toBeGreaterThan(g);
      await store.dropGeneration(next);
      expect(await store.generations()).toEqual({ live: g, building: [] });
      await expect(store.dropGeneration(next)).rejects.toMatchObject({ code: "generation_not_found" });
    });

    it("filters", "a filter that breaks the language or the columns throws FilterError with every issue", async () => {
      const store = await fresh();
      const pin = await store.pin();
      const err = await pin.search({ vector: new Float32Array(DIMS).fill(1), k: 1, filter: { nope: 1, category: { gt: 1 } } }).catch((e) => e);
      pin.release();
      expect(err).toBeInstanceOf(FilterError);
      expect((err as FilterError).details.length).toBe(2);
      await expect(store.count({ price: { eq: null } })).rejects.toBeInstanceOf(FilterError);
    });
  });
}

/** Brute-force top-k over rows passing `keep`, ties by numeric pk, then `minScore` (with float slack). */
export function reference(rows: UpsertRow[], vector: Float32Array, k: number, keep: (m: Metadata) => boolean, minScore: number | null) {
  return rows
    .filter((r) => keep(r.metadata))
    .map((r) => ({ pk: r.pk, score: cosine(r.vector, vector) }))
    .sort((a, b) => b.score - a.score || Number(a.pk) - Number(b.pk))
    .slice(0, k)
    .filter((r) => minScore === null || r.score >= minScore - 1e-6);
}

/** Same ranking up to float noise: a near-tie (within the tolerance) may swap places. */
export function expectRanking(hits: SearchHit[], expected: { pk: string; score: number }[], tolerance: number, what: string) {
  const context = `${what}: got ${JSON.stringify(hits.map((h) => h.pk))}, expected ${JSON.stringify(expected.map((e) => e.pk))}`;
  expect(hits.length, context).toBe(expected.length);
  hits.forEach((h, i) => {
    expect(Math.abs(h.score - expected[i]!.score), context).toBeLessThan(tolerance);
    if (i > 0) expect(hits[i - 1]!.score >= h.score, context).toBe(true);
  });
  const last = expected[expected.length - 1]?.score ?? 0;
  for (const h of hits) expect(expected.some((e) => e.pk === h.pk) || Math.abs(h.score - last) < tolerance, context).toBe(true);
}
