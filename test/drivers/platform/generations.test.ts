// Re-backfill generations of a pgvector platform table: a building table filled on the side,
// swapped in by a rename in one transaction while searches run (each sees one generation whole,
// none fails), or dropped.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { platformVectorRef } from "../../../src/drivers/platform/pgvector-schema.ts";
import type { GenerationSpec, UpsertRow } from "../../../src/drivers/store-api/index.ts";
import { productRows, SPEC } from "../vector-store/helpers.ts";
import { platformWorld, type PlatformWorld } from "./world.ts";

let world: PlatformWorld;
beforeAll(async () => {
  world = await platformWorld();
});
afterAll(async () => {
  await world?.[Symbol.asyncDispose]();
});

/** Generation 2 changes the shape: the same column name with another type, and fewer columns. */
const SPEC2: GenerationSpec = { dimensions: 16, numericPk: true, metadata: [{ name: "category", type: "integer" }] };

const tagged = (rows: UpsertRow[], tag: string) => rows.map((r) => ({ ...r, text: `${tag} ${r.pk}` }));

describe("happy", () => {
  test("writes go to the named generation; the swap makes it live under concurrent searches", async () => {
    const { store } = world;
    const ref = platformVectorRef("gens0001xxxx", "generations");
    await store.ensureTable(ref, SPEC);
    await store.upsert(ref, tagged(productRows(200, 16, 2), "g1"));

    const g = await store.createGeneration(ref, SPEC2);
    expect(g).toBe(2);
    expect(await store.generations(ref)).toMatchObject({ live: 1, building: [2] });
    const rows2 = tagged(productRows(150, 16, 9), "g2").map((r) => ({ ...r, metadata: { category: Number(r.pk) % 3 } }));
    await store.upsert(ref, rows2, { generation: g });
    expect(await store.count(ref)).toBe(200);
    expect(await store.count(ref, { category: 1 }, { generation: g })).toBe(50);
    expect((await store.hashes(ref, { pks: ["3"], generation: g }))[0]!.textHash).toBe("t3");
    expect((await store.docs(ref, ["3"], { generation: g })).get("3")!.text).toBe("g2 3");
    // The live generation still answers with its own shape.
    expect((await store.search(ref, { vector: new Float32Array(16).fill(0.1), k: 3, filter: { category: "books" } })).hits.length).toBe(3);

    let stop = false;
    const seen = { g1: 0, g2: 0, errors: [] as unknown[] };
    const searcher = async () => {
      while (!stop) {
        try {
          const { hits } = await store.search(ref, { vector: new Float32Array(16).fill(0.1), k: 10 });
          const types = new Set(hits.map((h) => typeof h.metadata.category));
          if (types.size > 1) seen.errors.push(new Error(`mixed metadata types: ${[...types]}`));
          const tags = new Set(hits.map((h) => h.text.split(" ")[0]));
          if (tags.size !== 1) seen.errors.push(new Error(`mixed generations: ${[...tags]}`));
          if (tags.has("g1")) seen.g1++;
          if (tags.has("g2")) seen.g2++;
        } catch (e) {
          seen.errors.push(e);
        }
      }
    };
    const searchers = [searcher(), searcher(), searcher()];
    await Bun.sleep(150);
    await store.swapGeneration(ref, g);
    await Bun.sleep(150);
    stop = true;
    await Promise.all(searchers);
    expect(seen.errors).toEqual([]);
    expect(seen.g1).toBeGreaterThan(0);
    expect(seen.g2).toBeGreaterThan(0);

    expect(await store.generations(ref)).toMatchObject({ live: 2, building: [] });
    expect(await store.count(ref)).toBe(150);
    const { hits } = await store.search(ref, { vector: rows2[4]!.vector, k: 1, filter: { category: 1 } });
    expect(hits[0]).toMatchObject({ pk: "4", text: "g2 4", metadata: { category: 1 } });
    // Writes without a generation now go to generation 2; the next generation is 3, and may
    // change the dimensions.
    await store.delete(ref, ["4"]);
    expect(await store.count(ref)).toBe(149);
    expect(await store.createGeneration(ref, SPEC)).toBe(3);
    await store.dropGeneration(ref, 3);
    expect(await store.generations(ref)).toMatchObject({ live: 2, building: [] });
    const wide = await store.createGeneration(ref, { ...SPEC2, dimensions: 24 });
    await store.upsert(ref, tagged(productRows(5, 24, 1), "g4").map((r) => ({ ...r, metadata: {} })), { generation: wide });
    await store.swapGeneration(ref, wide);
    expect((await store.search(ref, { vector: new Float32Array(24).fill(0.3), k: 10 })).hits.map((h) => h.text).sort()).toEqual(["g4 0", "g4 1", "g4 2", "g4 3", "g4 4"]);
  });

  test("a search holding the live table delays the swap; it never sees a mix or a missing table", async () => {
    const { store, db } = world;
    const ref = platformVectorRef("gens0002xxxx", "swaplock");
    await store.ensureTable(ref, SPEC);
    await store.upsert(ref, tagged(productRows(50, 16, 4), "g1"));
    const g = await store.createGeneration(ref, SPEC);
    await store.upsert(ref, tagged(productRows(50, 16, 4), "g2"), { generation: g });
    // Another session holds the ref's shared lock, as a long search would.
    const held = await db.sql.reserve();
    await held`BEGIN`;
    await held`SELECT pg_advisory_xact_lock_shared(hashtextextended(${`vecsync:${ref}`}::text, 0))`;
    let swapped = false;
    const swap = store.swapGeneration(ref, g).then(() => (swapped = true));
    await Bun.sleep(100);
    expect(swapped).toBe(false);
    const during = store.search(ref, { vector: new Float32Array(16).fill(0.2), k: 5 }); // queued behind the swap
    await held`COMMIT`;
    held.release();
    await swap;
    const { hits } = await during;
    expect(new Set(hits.map((h) => h.text.split(" ")[0]))).toEqual(new Set(["g2"]));
  });
});

describe("errors", () => {
  test("unknown generations, and generations of a missing table", async () => {
    const { store } = world;
    const ref = platformVectorRef("gens0003xxxx", "errors");
    await expect(store.createGeneration(ref, SPEC)).rejects.toMatchObject({ code: "collection_not_found" });
    await store.ensureTable(ref, SPEC);
    await expect(store.swapGeneration(ref, 7)).rejects.toMatchObject({ code: "generation_not_found" });
    await expect(store.dropGeneration(ref, 1)).rejects.toMatchObject({ code: "generation_not_found" });
    await expect(store.upsert(ref, productRows(1, 16), { generation: 5 })).rejects.toMatchObject({ code: "generation_not_found" });
    // The live generation may be named explicitly.
    await store.upsert(ref, productRows(2, 16), { generation: 1 });
    expect(await store.count(ref, undefined, { generation: 1 })).toBe(2);
  });
});
