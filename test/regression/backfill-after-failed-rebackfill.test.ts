// Regression (issue 12, item 6): after a PUT changed the dimensions and its re-backfill failed for
// good, a POST …/backfill was accepted and ran against the *serving* generation with the *new*
// configuration ("vector has 16 dimensions, collection has 32"): the table went to `error` and the
// intact vectors stopped answering; the failed re-backfill's generation was left `building`.
// Now the failed re-backfill's generation is dropped (files too), the old generation keeps
// serving (a sync pass leaves it alone too), and the backfill builds a new generation for the
// current configuration and swaps it in.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { basename } from "node:path";
import { and, eq } from "drizzle-orm";
import { runBatchPass } from "../../src/domains/sync/batch.ts";
import { tasks } from "../../src/scheduler/tables.ts";
import { eventually } from "../harness.ts";
import { createWorld, DIMS, enqueueFill, MODEL, expectedSet, newVectorTable, sortedEntries, storedSet, tableRow, taskDone, type World } from "../domains/sync/world.ts";

const ROWS = 300;
let w: World;
beforeAll(async () => {
  w = await createWorld({ rows: ROWS });
  w.services.scheduler.start();
});
afterAll(() => w.dispose());

const fillTasks = (tableId: string) => w.services.database.db.select().from(tasks).where(and(eq(tasks.targetId, tableId)));
/** Index files of the collection's generations other than `live`, anywhere in the data directory. */
function strayFiles(dir: string, collection: string, live: number): string[] {
  const names = readdirSync(dir, { recursive: true, encoding: "utf8" }).map((f) => basename(f));
  return names.filter((n) => n.startsWith(`${collection}.g`) && !n.startsWith(`${collection}.g${live}.`));
}

describe("happy", () => {
  test("PUT dimensions → re-backfill fails for good → POST backfill: old vectors keep serving, then the new generation is built and swapped", async () => {
    const table = await newVectorTable(w);
    await taskDone(w, (await enqueueFill(w, table)).id);
    const collection = table.vectorstoreCollection;
    const live = w.services.vectors.generations(collection).live;
    const before = sortedEntries(await storedSet(w.services, table));
    expect(before).toHaveLength(ROWS);

    // The provider refuses every batch of the new configuration: the re-backfill fails at once.
    w.fake.set({ maxInputs: 1 });
    const put = await w.app.request("PUT", `/v1/vector-tables/${table.id}`, { headers: w.org.owner.key, body: { embedding_dimensions: 16 } });
    expect(put.status).toBe(200);
    const [rebackfill] = (await fillTasks(table.id)).filter((t) => t.taskType === "rebackfill");
    const failed = await eventually(async () => {
      const [t] = (await fillTasks(table.id)).filter((x) => x.id === rebackfill!.id);
      return t?.status === "failed" && t;
    }, 20_000);
    expect(await tableRow(w, table.id)).toMatchObject({ syncStatus: "error", servingDimensions: DIMS, embeddingDimensions: 16 });
    expect((await tableRow(w, table.id))!.lastError).toBe(`the re-backfill to 16 dimensions failed: ${failed.lastError}. Queries are answered from the previous vectors (${MODEL}, ${DIMS} dimensions); POST …/backfill tries again`);
    // The failed generation is gone, files included; the serving one is whole.
    await eventually(() => w.services.vectors.generations(collection).building.length === 0, 10_000);
    expect(w.services.vectors.generations(collection).live).toBe(live);
    expect(strayFiles(w.app.config.dataDir, collection, live)).toEqual([]);
    expect(sortedEntries(await storedSet(w.services, table))).toEqual(before);
    // Nor does a sync pass of the `error` table write the serving generation with 16 dimensions.
    await w.sql`UPDATE docs SET body = 'changed while in error' WHERE id = 5`;
    expect(await runBatchPass(w.services, table.id)).toBeNull();
    expect(sortedEntries(await storedSet(w.services, table))).toEqual(before);

    // A backfill asked for now must not write the serving generation with 16 dimensions.
    w.fake.set({ maxInputs: null });
    const inputs = w.fake.counters.inputs;
    const post = await w.app.request("POST", `/v1/vector-tables/${table.id}/backfill`, { headers: w.org.owner.key });
    expect(post.status).toBe(200);
    const backfill = (await fillTasks(table.id)).find((t) => t.taskType === "backfill" && t.status !== "completed")!;
    await taskDone(w, backfill.id);
    const row = (await tableRow(w, table.id))!;
    expect(row).toMatchObject({ syncStatus: "synced", lastError: null, servingDimensions: 16, servedConfigVersion: row.configVersion, syncedRows: ROWS });
    expect(w.fake.counters.inputs - inputs).toBe(ROWS);
    const gens = w.services.vectors.generations(collection);
    expect(gens.live).toBeGreaterThan(live);
    expect(gens.building).toEqual([]);
    await w.services.vectors.checkpoint(collection);
    await eventually(() => strayFiles(w.app.config.dataDir, collection, gens.live).length === 0, 10_000);
    expect(sortedEntries(await storedSet(w.services, { ...table, embeddingDimensions: 16 }))).toEqual(sortedEntries(await expectedSet(w.sql)));
  });

  test("a columns change the same way: the serving generation keeps its old texts until the rebuilt one is swapped in", async () => {
    const table = await newVectorTable(w);
    await taskDone(w, (await enqueueFill(w, table)).id);
    const collection = table.vectorstoreCollection;
    const columns = [{ name: "title", role: "embedding", ordinal: 1, name_prefix: "T: " }, { name: "body", role: "embedding", ordinal: 2 }, { name: "category", role: "metadata", filter_type: "keyword" }];
    w.fake.set({ maxInputs: 1 });
    expect((await w.app.request("PUT", `/v1/vector-tables/${table.id}`, { headers: w.org.owner.key, body: { columns } })).status).toBe(200);
    await eventually(async () => (await tableRow(w, table.id))!.syncStatus === "error", 20_000);
    await eventually(() => w.services.vectors.generations(collection).building.length === 0, 10_000);

    // Still refused: the backfill fails as a re-backfill would, never touching the serving texts.
    const post = await w.app.request("POST", `/v1/vector-tables/${table.id}/backfill`, { headers: w.org.owner.key });
    expect(post.status).toBe(200);
    await eventually(async () => (await fillTasks(table.id)).every((t) => t.status === "completed" || t.status === "failed"), 20_000);
    expect((await tableRow(w, table.id))!.syncStatus).toBe("error");
    await eventually(() => w.services.vectors.generations(collection).building.length === 0, 10_000);
    const stored = await storedSet(w.services, table);
    expect(stored.size).toBe(ROWS);
    expect([...stored.values()].every((r) => r.text.startsWith("Title: "))).toBe(true);
    w.fake.set({ maxInputs: null });
  });
});
