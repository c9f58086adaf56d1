// Writes with `indexLater` (the change stream's, src/drivers/vector-store/later.ts): searchable on
// the HNSW path the moment the upsert returns — before the graph has them — and still after the
// background steps placed them, after a replacement, and after a restart.
import { describe, expect, test } from "bun:test";
import { HnswIndex } from "../../../../src/drivers/vector-store/hnsw.ts";
import { BACKLOG, LaterIndexer } from "../../../../src/drivers/vector-store/later.ts";
import { Mirror } from "../../../../src/drivers/vector-store/mirror.ts";
import { checkStrays } from "../../../../src/drivers/vector-store/strays.ts";
import { pacerOn } from "./fake-time.ts";
import { makeWorld, pks, productRows, SPEC } from "../helpers.ts";

describe("happy", () => {
  test("rows written with indexLater are found by their own vector at once, after indexing, and after a restart", async () => {
    await using w = await makeWorld();
    const store = await w.open({ index: { threads: 1 } });
    await store.createCollection("vt_a", SPEC);
    // Past the unfiltered exact limit (2,048 rows): unfiltered searches take the HNSW path.
    await store.upsert("vt_a", productRows(3000, SPEC.dimensions));
    await store.whenReady("vt_a");
    // More than search.ts STRAYS_SCANNED_FROM (256) waiting: the first searches pick among them by an i8 scan.
    const fresh = productRows(1000, SPEC.dimensions, 7, 3000);
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

const PARAMS = { connectivity: 16, expansionAdd: 64, expansionSearch: 64, threads: 2 } as const;

describe("a writer ahead of the graph (fills write this way too), inserting off the event loop", () => {
  test("waits at settle: past BACKLOG rows waiting, the next write starts only once the insertions caught up; every row stays findable", async () => {
    const failures: string[] = [];
    const owner = {
      hnsw: new HnswIndex(SPEC.dimensions, PARAMS),
      mirror: new Mirror(SPEC),
      status: "ready" as const,
      closed: false,
      pace: pacerOn(),
      failed: (event: string, error: unknown) => failures.push(`${event}: ${error}`),
      verifyLater: (rids: number[]) => void checkStrays(owner.hnsw, owner.mirror, rids), // what the sweeper does once the writes pause
    };
    const later = new LaterIndexer(owner);
    const rows = productRows(4 * BACKLOG, SPEC.dimensions, 3);
    const PAGE = 256;
    const seenBefore: number[] = [];
    for (let from = 0; from < rows.length; from += PAGE) {
      await later.settle(); // what store.upsert does before an indexLater write
      seenBefore.push(later.backlog);
      const page = rows.slice(from, from + PAGE);
      const rids = page.map((_, i) => from + i);
      page.forEach((row, i) => owner.mirror.set(rids[i]!, row.vector, [null, null, null, null], row.pk, row.text, 1));
      later.note(rids);
      // Noted rows are strays until placed: searches score them exactly (search.ts withStrays).
      for (const rid of rids) expect(owner.hnsw.strays.has(rid) || owner.hnsw.has([rid], [1])[0]).toBe(true);
    }
    // While held (a checkpoint saves the graph), no insertion runs: the graph keeps its size over many turns.
    await later.holding(async () => {
      const size = owner.hnsw.size;
      expect(later.backlog).toBeGreaterThan(0); // rows wait that an insertion would take
      for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
      expect(owner.hnsw.size).toBe(size);
    });
    // A writer never began with more than BACKLOG rows waiting, and it did get ahead of the graph.
    expect(Math.max(...seenBefore)).toBeLessThanOrEqual(BACKLOG);
    expect(Math.max(...seenBefore)).toBeGreaterThan(0);
    await later.idle();
    expect(later.backlog).toBe(0);
    expect(owner.hnsw.size).toBe(rows.length);
    // Placed and checked: a row is a stray only if its own vector does not reach it.
    let found = 0;
    for (let rid = 0; rid < rows.length; rid++) if (!owner.hnsw.strays.has(rid)) found++;
    expect(found).toBeGreaterThan(rows.length * 0.95);
    expect(failures).toEqual([]);
  });
});
