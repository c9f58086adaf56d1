// The pgvector platform store against the machine's real PostgreSQL + pgvector: rows, hashes,
// counts, exact filtered search against a brute-force reference, ties, min score, drop.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { platformVectorRef } from "../../../src/drivers/platform/pgvector-schema.ts";
import { compilePredicate, FilterError, parseFilter, VectorStoreError, type GenerationSpec, type Metadata, type SearchHit, type UpsertRow } from "../../../src/drivers/store-api/index.ts";
import { productRows, rng, SPEC } from "../vector-store/helpers.ts";
import { expectRanking, reference } from "./contract.ts";
import { platformWorld, type PlatformWorld } from "./world.ts";

let world: PlatformWorld;
beforeAll(async () => {
  world = await platformWorld();
});
afterAll(async () => {
  await world?.[Symbol.asyncDispose]();
});

const unit = (...xs: number[]) => Float32Array.from(xs);
const row = (pk: string, vector: Float32Array, metadata: Metadata = {}, text = `row ${pk}`): UpsertRow => ({ pk, textHash: `t-${text}`, metaHash: `m-${JSON.stringify(metadata)}`, text, metadata, vector });

describe("happy", () => {
  test("the ref names a vecsync table: vt_<id8>_<name>, at most Postgres's 63 characters", () => {
    expect(platformVectorRef("abcdefgh12345678", "My Products!")).toBe("vecsync.vt_abcdefgh_my_products_");
    expect(platformVectorRef("abcdefgh12345678", "x".repeat(100)).split(".")[1]!.length).toBe(63);
  });

  test("ensureTable is idempotent; rows upsert, update metadata, hash, count and delete", async () => {
    const { store } = world;
    const ref = platformVectorRef("rows0001xxxx", "rows");
    await store.ensureTable(ref, SPEC);
    await store.ensureTable(ref, SPEC);
    expect(await store.hasTable(ref)).toBe(true);
    expect(await store.generations(ref)).toMatchObject({ live: 1, building: [] });

    const rows = productRows(30, 16, 3);
    await store.upsert(ref, rows);
    expect(await store.count(ref)).toBe(30);
    await store.upsert(ref, [{ ...rows[0]!, text: "replaced", textHash: "t-new" }, { ...rows[0]!, text: "replaced twice", textHash: "t-newer" }]);
    expect(await store.count(ref)).toBe(30);

    const hashes = await store.hashes(ref, { pks: ["0", "1", "nope"] });
    expect(hashes).toEqual([
      { pk: "0", textHash: "t-newer", metaHash: "m0" },
      { pk: "1", textHash: "t1", metaHash: "m1" },
    ]);
    const docs = await store.docs(ref, ["0", "2"]);
    expect(docs.get("0")!.text).toBe("replaced twice");
    expect(Array.from(docs.get("2")!.vector)).toEqual(Array.from(rows[2]!.vector));

    // Paging in pk code point order: "0" < "1" < "10" < … < "2" < "20" …
    const page1 = await store.hashes(ref, { limit: 4 });
    expect(page1.map((h) => h.pk)).toEqual(["0", "1", "10", "11"]);
    const page2 = await store.hashes(ref, { afterPk: "11", limit: 3 });
    expect(page2.map((h) => h.pk)).toEqual(["12", "13", "14"]);

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

  test("metadata round-trips typed, nulls and missing columns as null, NaN as null", async () => {
    const { store } = world;
    const ref = platformVectorRef("meta0001xxxx", "meta");
    await store.ensureTable(ref, SPEC);
    await store.upsert(ref, [
      row("1", unit(1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), { category: "it's \"quoted\" ✓", price: -0.1, stock: -5, active: false }),
      row("2", unit(0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), { price: Number.NaN }),
    ]);
    const { hits } = await store.search(ref, { vector: unit(1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), k: 5 });
    expect(hits.map((h) => [h.pk, h.metadata])).toEqual([
      ["1", { category: "it's \"quoted\" ✓", price: -0.1, stock: -5, active: false }],
      ["2", { category: null, price: null, stock: null, active: null }],
    ]);
  });

  test("search matches a brute-force reference for every operator, $or, nulls and min score", async () => {
    const { store } = world;
    const ref = platformVectorRef("srch0001xxxx", "search");
    await store.ensureTable(ref, SPEC);
    const rows = productRows(500, 16, 11);
    await store.upsert(ref, rows);
    const filters: unknown[] = [
      undefined,
      { category: "books" },
      { category: { eq: "games" } },
      { category: { neq: "books" } },
      { category: ["books", "tools"] },
      { category: { in: ["games"] } },
      { category: { nin: ["books", "games"] } },
      { category: { exists: false } },
      { price: { exists: true }, stock: { gte: 10, lt: 20 } },
      { price: { gt: 50.5 } },
      { price: { lte: 3 } },
      { price: { gte: 10, lte: 10.5 } },
      { stock: { gt: 47.5 } },
      { stock: { neq: 3 } },
      { stock: { nin: [1, 2, 3] } },
      { active: true },
      { active: { neq: true } },
      { $or: [{ category: "tools", active: false }, { stock: { lt: 2 } }] },
      { $or: [{ price: { exists: false } }, { $or: [{ category: { exists: false } }, { stock: 49 }] }] },
      { category: { in: [] } },
      { stock: 12345 },
    ];
    const rand = rng(77);
    const queries = [rows[3]!.vector, rows[250]!.vector, Float32Array.from({ length: 16 }, () => rand() * 2 - 1)];
    for (const filter of filters) {
      const node = parseFilter(filter, SPEC.metadata);
      const keep = compilePredicate<Metadata>(node, (c) => (m) => m[SPEC.metadata[c]!.name] ?? null);
      for (const [qi, vector] of queries.entries()) {
        for (const k of [1, 10, 37]) {
          const minScore = qi === 2 ? 0.2 : null;
          const { hits } = await store.search(ref, { vector, k, filter, minScore });
          const expected = reference(rows, vector, k, keep, minScore);
          expectRanking(hits, expected, 1e-5, `${JSON.stringify(filter)} q${qi} k${k}`);
          for (const h of hits) expect(keep(h.metadata)).toBe(true);
        }
      }
    }
  });

  test("the ANN query is served by the table's HNSW index (vector_cosine_ops)", async () => {
    const { store, db } = world;
    const ref = platformVectorRef("hnsw0001xxxx", "hnsw");
    await store.ensureTable(ref, SPEC);
    const rows = productRows(1000, 16, 21);
    await store.upsert(ref, rows);
    // Made without the index (a first backfill fills it first), then indexed in one go.
    await store.buildIndex(ref);
    await store.buildIndex(ref);
    await db.sql.unsafe('ANALYZE vecsync."vt_hnsw0001_hnsw"');
    const vector = `[${Array.from(rows[5]!.vector).join(",")}]`;
    // On 1,000 rows the planner may find a sequential scan as cheap; with it priced out, the plan
    // shows whether the table's HNSW index can serve this operator at all.
    const plan = await db.sql.begin(async (tx) => {
      await tx.unsafe("SET LOCAL enable_seqscan = off");
      return tx.unsafe('EXPLAIN SELECT pk FROM vecsync."vt_hnsw0001_hnsw" WHERE TRUE ORDER BY embedding <=> $1::text::vector(16) LIMIT 11', [vector]);
    });
    expect(plan.map((r) => String(r["QUERY PLAN"])).join("\n")).toContain("Index Scan using \"vt_hnsw0001$g1$hnsw\"");
    const result = await store.search(ref, { vector: rows[5]!.vector, k: 10 });
    expect(result.path).toBe("index");
    expect(result.hits[0]!.pk).toBe("5");
  });

  test("ties in score go by pk: numerically for numeric pks, by code point for text pks, also across the k boundary", async () => {
    const { store } = world;
    const same = unit(0.6, 0.8, 0, 0);
    const numeric: GenerationSpec = { dimensions: 4, numericPk: true, metadata: [] };
    const nref = platformVectorRef("ties0001xxxx", "numeric");
    await store.ensureTable(nref, numeric);
    const npks = ["100", "9", "10", "-1", "2.5", "12345678901234567890", "3"];
    await store.upsert(nref, [...npks.map((pk) => row(pk, same)), row("0", unit(0, 0, 1, 0)), row("1", unit(0.6, 0.8, 0.01, 0))]);
    const all = await store.search(nref, { vector: same, k: 20 });
    expect(all.hits.map((h) => h.pk)).toEqual(["-1", "2.5", "3", "9", "10", "100", "12345678901234567890", "1", "0"]);
    // 7 rows tie for the top score: the 3 smallest pks win, not whichever the index met first.
    expect((await store.search(nref, { vector: same, k: 3 })).hits.map((h) => h.pk)).toEqual(["-1", "2.5", "3"]);

    const tref = platformVectorRef("ties0002xxxx", "text");
    await store.ensureTable(tref, { ...numeric, numericPk: false });
    const tpks = ["b", "a", "B", "ä", "aa", "10", "9", "😀", "ｚ"];
    await store.upsert(tref, tpks.map((pk) => row(pk, same)));
    expect((await store.search(tref, { vector: same, k: 20 })).hits.map((h) => h.pk)).toEqual(["10", "9", "B", "a", "aa", "b", "ä", "ｚ", "😀"]);
    expect((await store.search(tref, { vector: same, k: 2 })).hits.map((h) => h.pk)).toEqual(["10", "9"]);
  });

  test("min score keeps hits at or above it; score is 1 − cosine distance", async () => {
    const { store } = world;
    const ref = platformVectorRef("mins0001xxxx", "minscore");
    await store.ensureTable(ref, { dimensions: 2, numericPk: true, metadata: [] });
    await store.upsert(ref, [row("1", unit(1, 0)), row("2", unit(1, 1)), row("3", unit(0, 1)), row("4", unit(-1, 0))]);
    const all = await store.search(ref, { vector: unit(1, 0), k: 10 });
    expect(all.hits.map((h) => h.pk)).toEqual(["1", "2", "3", "4"]);
    expect(all.hits.map((h) => Math.round(h.score * 1e6) / 1e6)).toEqual([1, 0.707107, 0, -1]);
    expect((await store.search(ref, { vector: unit(1, 0), k: 10, minScore: 0.7 })).hits.map((h) => h.pk)).toEqual(["1", "2"]);
    expect((await store.search(ref, { vector: unit(1, 0), k: 10, minScore: 1.01 })).hits).toEqual([]);
  });

  test("more than 2,000 dimensions: a halfvec column (CONTRACT 12) with its HNSW index; scores within half precision", async () => {
    const { store, db } = world;
    const ref = platformVectorRef("wide0001xxxx", "wide");
    const spec: GenerationSpec = { dimensions: 3072, numericPk: true, metadata: [{ name: "n", type: "integer" }] };
    await store.ensureTable(ref, spec);
    await store.buildIndex(ref);
    const [column] = await db.sql`SELECT format_type(atttypid, atttypmod) AS type FROM pg_attribute WHERE attrelid = 'vecsync.vt_wide0001_wide'::regclass AND attname = 'embedding'`;
    expect(column!.type).toBe("halfvec(3072)");
    const [index] = await db.sql`SELECT indexdef FROM pg_indexes WHERE schemaname = 'vecsync' AND tablename = 'vt_wide0001_wide' AND indexdef LIKE '%hnsw%'`;
    expect(index!.indexdef).toContain("halfvec_cosine_ops");
    const rand = rng(5);
    const rows = Array.from({ length: 40 }, (_, i) => row(String(i), Float32Array.from({ length: 3072 }, () => rand() - 0.5), { n: i % 4 }));
    await store.upsert(ref, rows);
    const { hits } = await store.search(ref, { vector: rows[7]!.vector, k: 5, filter: { n: 3 } });
    expect(hits[0]!.pk).toBe("7");
    const expected = reference(rows, rows[7]!.vector, 5, (m) => m.n === 3, null);
    expect(hits.map((h) => h.pk)).toEqual(expected.map((e) => e.pk));
    hits.forEach((h, i) => expect(Math.abs(h.score - expected[i]!.score)).toBeLessThan(1e-3));
  });

  test("dropTable removes the table and its building generations; dropping twice is fine", async () => {
    const { store, db } = world;
    const ref = platformVectorRef("drop0001xxxx", "drop");
    await store.ensureTable(ref, SPEC);
    await store.createGeneration(ref, SPEC);
    await store.dropTable(ref);
    await store.dropTable(ref);
    expect(await store.hasTable(ref)).toBe(false);
    const left = await db.sql`SELECT relname FROM pg_class WHERE relname LIKE 'vt_drop0001%'`;
    expect(left.length).toBe(0);
    await expect(store.search(ref, { vector: new Float32Array(16).fill(1), k: 1 })).rejects.toMatchObject({ code: "collection_not_found" });
  });
});

describe("security", () => {
  test("search_path is pinned: a schema named like the connecting user cannot stand in for pgvector's <=>", async () => {
    await using shadowed = await platformWorld({}, async (db) => {
      // The default search_path starts with "$user": a schema of that name, which another database
      // user may own, would be searched before pgvector's own.
      const user = new URL(db.url).username;
      await db.sql.unsafe(`CREATE SCHEMA "${user}"`);
      await db.sql.unsafe(`CREATE FUNCTION "${user}".peek(a vector, b vector) RETURNS float8 LANGUAGE sql IMMUTABLE AS 'SELECT 0.0::float8'`);
      await db.sql.unsafe(`CREATE OPERATOR "${user}".<=> (LEFTARG = vector, RIGHTARG = vector, FUNCTION = "${user}".peek)`);
    });
    const ref = platformVectorRef("pins0001xxxx", "pinned");
    await shadowed.store.ensureTable(ref, { dimensions: 2, numericPk: true, metadata: [] });
    await shadowed.store.upsert(ref, [row("1", unit(1, 0)), row("2", unit(0, 1)), row("3", unit(-1, 0))]);
    const { hits } = await shadowed.store.search(ref, { vector: unit(1, 0), k: 3 });
    expect(hits.map((h) => [h.pk, Math.round(h.score * 1e6) / 1e6])).toEqual([["1", 1], ["2", 0], ["3", -1]]);
  });
});

describe("errors", () => {
  test("bad filters throw FilterError with every issue; bad rows and refs throw VectorStoreError", async () => {
    const { store } = world;
    const ref = platformVectorRef("errs0001xxxx", "errors");
    await store.ensureTable(ref, SPEC);
    const vector = new Float32Array(16).fill(1);
    const err = await store.search(ref, { vector, k: 1, filter: { nope: 1, category: { gt: 1 } } }).catch((e) => e);
    expect(err).toBeInstanceOf(FilterError);
    expect((err as FilterError).details.length).toBe(2);
    await expect(store.count(ref, { price: { eq: null } })).rejects.toBeInstanceOf(FilterError);
    const bad = [
      row("1", new Float32Array(3).fill(1)),
      row("1", new Float32Array(16)),
      row("1", vector, { stock: 1.5 }),
      row("1", vector, { unknown: 1 }),
      row("1", vector, { category: 3 }),
    ];
    for (const r of bad) await expect(store.upsert(ref, [r])).rejects.toMatchObject({ code: "invalid_row" });
    expect(await store.count(ref)).toBe(0);
    await expect(store.ensureTable(ref, { ...SPEC, dimensions: 8 })).rejects.toMatchObject({ code: "collection_exists" });
    for (const r of ["public.x", "vecsync.X", "vecsync.a.b", "vecsync.vt_abcdefgh$g2", "vecsync.vt_short_x", `vecsync.vt_abcdefgh_${"a".repeat(52)}`]) {
      await expect(store.hasTable(r)).rejects.toBeInstanceOf(VectorStoreError);
    }
    await expect(store.count("vecsync.vt_nothere0_x")).rejects.toMatchObject({ code: "collection_not_found" });
  });
});
