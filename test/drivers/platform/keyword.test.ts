// Keyword search's state in a pgvector platform table (pgvector-keyword.ts): the statistics beside
// the table follow a re-backfill's swap and go with a drop; a table from before keyword search
// refuses keyword and hybrid until its next settle adds the columns, then answers as brute force;
// a selective filter still answers k; a search pinned to a generation no longer live is refused.
// Managed/platform parity on random rows: keyword-parity.property.test.ts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { platformVectorRef } from "../../../src/drivers/platform/pgvector-schema.ts";
import { UnsupportedModeError } from "../../../src/drivers/platform/types.ts";
import type { UpsertRow } from "../../../src/drivers/store-api/index.ts";
import { clusteredVectors, productRows, SPEC } from "../vector-store/helpers.ts";
import { keywordReference } from "../vector-store/keyword-reference.ts";
import { platformWorld, type PlatformWorld } from "./world.ts";

let world: PlatformWorld;
beforeAll(async () => {
  world = await platformWorld();
});
afterAll(async () => {
  await world?.[Symbol.asyncDispose]();
});

const WORDS = ["river", "stone", "amber", "falcon", "harbor"];
const worded = (rows: UpsertRow[]) => rows.map((r, i) => ({ ...r, text: Array.from({ length: 1 + (i % 7) }, (_, j) => WORDS[(i * 3 + j * j) % WORDS.length]).join(" ") }));
const query = clusteredVectors(1, SPEC.dimensions, 5)[0]!;

async function expectBruteForce(ref: string, rows: UpsertRow[], text: string, k = 10): Promise<void> {
  const { hits } = await world.store.search(ref, { vector: query, k, mode: "keyword", text });
  const want = keywordReference(rows, text, query).slice(0, k);
  expect(hits.map((h) => h.pk)).toEqual(want.map((r) => r.pk));
  hits.forEach((h, i) => expect(h.keywordScore!).toBeCloseTo(want[i]!.keywordScore!, 9));
}

const sideTables = async (ref: string) =>
  (await world.db.sql.unsafe(`SELECT relname FROM pg_class WHERE relname LIKE $1 AND relkind = 'r' ORDER BY relname`, [`${ref.split(".")[1]!.slice(0, 11)}$%`])).map((r) => String(r.relname));

describe("happy", () => {
  test("a swap makes the building generation's statistics live; a drop takes them", async () => {
    const { store } = world;
    const ref = platformVectorRef("kwgen001xxxx", "kwgen");
    await store.ensureTable(ref, SPEC);
    const rows1 = worded(productRows(60, SPEC.dimensions, 1));
    await store.upsert(ref, rows1);
    await expectBruteForce(ref, rows1, "river falcon");
    const g = await store.createGeneration(ref, SPEC);
    const rows2 = worded(productRows(25, SPEC.dimensions, 2)).map((r) => ({ ...r, text: `${r.text} harbor harbor` }));
    await store.upsert(ref, rows2, { generation: g });
    await expect(store.search(ref, { vector: query, k: 5, mode: "keyword", text: "river" }, { generation: g })).rejects.toMatchObject({ code: "generation_not_found" });
    await store.swapGeneration(ref, g);
    await expectBruteForce(ref, rows2, "river harbor");
    expect(await sideTables(ref)).toEqual(["vt_kwgen001$k2", "vt_kwgen001$n2"]);
    await store.dropTable(ref);
    expect(await sideTables(ref)).toEqual([]);
  });

  test("a table from before keyword search: keyword and hybrid refused until its next settle adds the columns", async () => {
    const { store, db } = world;
    const ref = platformVectorRef("kwold001xxxx", "kwold");
    await store.ensureTable(ref, SPEC);
    const rows = worded(productRows(70, SPEC.dimensions, 3));
    await store.upsert(ref, rows);
    // As an earlier version made it: no keyword columns, no statistics, a comment without `keyword`.
    const [row] = await db.sql.unsafe(`SELECT obj_description('${ref}'::regclass, 'pg_class') AS c`);
    const { keyword: _, ...comment } = JSON.parse(String(row!.c));
    await db.sql.unsafe(`ALTER TABLE ${ref} DROP COLUMN vecsync_terms, DROP COLUMN vecsync_length; DROP TABLE vecsync."vt_kwold001$k1", vecsync."vt_kwold001$n1"; COMMENT ON TABLE ${ref} IS '${JSON.stringify(comment)}'`);
    for (const mode of ["keyword", "hybrid"] as const) {
      await expect(store.search(ref, { vector: query, k: 5, mode, text: "river" })).rejects.toBeInstanceOf(UnsupportedModeError);
    }
    const vector = await store.search(ref, { vector: query, k: 5, mode: "vector", text: "river" });
    expect(vector.hits.map((h) => h.keywordScore)).toEqual([null, null, null, null, null]);
    // Writes go on without the columns meanwhile.
    const changed = [...rows.slice(1), { ...rows[0]!, text: "amber amber falcon" }];
    await store.upsert(ref, [changed[changed.length - 1]!]);
    await store.buildIndex(ref);
    await expectBruteForce(ref, changed, "amber falcon stone");
    await store.delete(ref, ["5", "6"]);
    await expectBruteForce(ref, changed.filter((r) => r.pk !== "5" && r.pk !== "6"), "amber falcon stone", 100);
  });

  test("concurrent writers of one table leave its statistics equal to a recount of its rows", async () => {
    const { store, db } = world;
    const ref = platformVectorRef("kwcon001xxxx", "kwcon");
    await store.ensureTable(ref, SPEC);
    const rows = worded(productRows(120, SPEC.dimensions, 4));
    // Overlapping keys and words from several transactions at once: each replaces or deletes rows another also touches.
    await Promise.all([
      store.upsert(ref, rows.slice(0, 80)),
      store.upsert(ref, rows.slice(40, 120).map((r) => ({ ...r, text: `${r.text} falcon` }))),
      store.delete(ref, rows.slice(30, 50).map((r) => r.pk)),
      store.upsert(ref, rows.slice(60, 100).map((r) => ({ ...r, text: "stone" }))),
    ]);
    const t = ref.split(".")[1]!.slice(0, 11);
    const [recount] = await db.sql.unsafe(`SELECT count(*)::int AS docs, coalesce(sum(vecsync_length), 0)::int AS length FROM ${ref}`);
    const [totals] = await db.sql.unsafe(`SELECT docs::int AS docs, length::int AS length FROM vecsync."${t}$n1"`);
    expect({ ...totals }).toEqual({ ...recount });
    const df = await db.sql.unsafe(`SELECT w AS term, count(*)::int AS df FROM ${ref}, jsonb_object_keys(vecsync_terms) AS w GROUP BY w ORDER BY w`);
    const stored = await db.sql.unsafe(`SELECT term, df::int AS df FROM vecsync."${t}$k1" ORDER BY term`);
    expect(stored.map((r) => [r.term, r.df])).toEqual(df.map((r) => [r.term, r.df]));
  });

  test("a selective filter still answers k when k rows qualify, however weak their scores", async () => {
    const ref = platformVectorRef("kwsel001xxxx", "kwsel");
    await world.store.ensureTable(ref, SPEC);
    const rows = productRows(400, SPEC.dimensions, 5).map((r, i) => ({
      ...r,
      text: i % 33 === 0 ? `common ${"filler ".repeat(30)}` : "common common",
      metadata: { ...r.metadata, category: i % 33 === 0 ? "rare" : "usual" },
    }));
    await world.store.upsert(ref, rows);
    const { hits } = await world.store.search(ref, { vector: query, k: 12, mode: "keyword", text: "common", filter: { category: "rare" } });
    expect(hits.map((h) => h.pk)).toEqual(keywordReference(rows, "common", query, (m) => m.category === "rare").slice(0, 12).map((r) => r.pk));
    expect(hits.length).toBe(12);
    // Every row ties on the floor IDF's score: ordered by primary key, numerically.
    const tied = await world.store.search(ref, { vector: query, k: 5, mode: "keyword", text: "common", filter: { category: "usual" } });
    expect(tied.hits.map((h) => h.pk)).toEqual(keywordReference(rows, "common", query, (m) => m.category === "usual").slice(0, 5).map((r) => r.pk));
  });
});
