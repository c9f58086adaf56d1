// Writes with `indexLater` (the change stream's, src/drivers/vector-store/later.ts): searchable on
// the HNSW path the moment the upsert returns — before the graph has them — and still after the
// background steps placed them, after a replacement, and after a restart.
import { describe, expect, test } from "bun:test";
import { makeWorld, pks, productRows, SPEC } from "./helpers.ts";

describe("happy", () => {
  test("rows written with indexLater are found by their own vector at once, after indexing, and after a restart", async () => {
    await using w = await makeWorld();
    const store = await w.open({ index: { threads: 1 } });
    await store.createCollection("vt_a", SPEC);
    // Past the unfiltered exact limit (2,048 rows): unfiltered searches take the HNSW path.
    await store.upsert("vt_a", productRows(3000, SPEC.dimensions));
    await store.whenReady("vt_a");
    const fresh = productRows(300, SPEC.dimensions, 7, 3000);
    await store.upsert("vt_a", fresh, { indexLater: true });
    const findsAll = async () => {
      for (const row of fresh) {
        const { path, hits } = await store.search("vt_a", { vector: row.vector, k: 1 });
        expect(path).toBe("hnsw");
        expect(pks(hits)).toEqual([row.pk]);
      }
    };
    await findsAll(); // not awaited into the graph: scored exactly meanwhile
    await store.whenReady("vt_a"); // the background steps are done
    await findsAll();

    // A replacement written the same way: the new vector finds the row, the old one no longer at 1.0.
    const moved = productRows(1, SPEC.dimensions, 99, 0).map((r) => ({ ...r, pk: fresh[0]!.pk }));
    await store.upsert("vt_a", moved, { indexLater: true });
    expect(pks((await store.search("vt_a", { vector: moved[0]!.vector, k: 1 })).hits)).toEqual([fresh[0]!.pk]);
    const old = (await store.search("vt_a", { vector: fresh[0]!.vector, k: 1 })).hits[0]!;
    expect(old.pk === fresh[0]!.pk && old.score > 0.9999).toBe(false);

    await store.close();
    const reopened = await w.open({ index: { threads: 1 } });
    await reopened.whenReady("vt_a");
    fresh[0] = moved[0]!;
    for (const row of fresh) expect(pks((await reopened.search("vt_a", { vector: row.vector, k: 1 })).hits)).toEqual([row.pk]);
    await reopened.close();
  });
});
