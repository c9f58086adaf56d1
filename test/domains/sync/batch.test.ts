import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runBatchPass } from "../../../src/domains/sync/batch.ts";
import { createWorld, enqueueFill, expectedSet, newVectorTable, sortedEntries, storedSet, tableRow, updateTableRow, type World, taskDone } from "./world.ts";
import type { VectorTableRow } from "../../../src/domains/vector-tables/tables.ts";

let w: World;
let table: VectorTableRow;
beforeAll(async () => {
  w = await createWorld({ rows: 300 });
  w.services.scheduler.start();
  table = await newVectorTable(w);
  const task = await enqueueFill(w, table);
  await taskDone(w, task.id);
});
afterAll(() => w.dispose());

const inputs = () => w.fake.counters.inputs;
const matchesSource = async () => expect(sortedEntries(await storedSet(w.services, table))).toEqual(sortedEntries(await expectedSet(w.sql)));

describe("happy", () => {
  test("insert, text update, metadata-only update (no embedding call) and delete", async () => {
    await w.sql`INSERT INTO docs VALUES (301, 'new title', 'new body', 'cat9', 9.5)`;
    await w.sql`UPDATE docs SET body = 'changed body' WHERE id = 5`;
    await w.sql`UPDATE docs SET category = 'moved', price = 0.25 WHERE id IN (6, 7, 8)`;
    await w.sql`DELETE FROM docs WHERE id IN (9, 10)`;
    const before = inputs();
    const result = (await runBatchPass(w.services, table.id))!;
    expect(result.counts).toMatchObject({ embedded: 2, metadata: 3, deleted: 2 });
    expect(inputs() - before).toBe(2);
    await matchesSource();
    const row = (await tableRow(w, table.id))!;
    expect(row).toMatchObject({ syncStatus: "synced", totalRows: 299, syncedRows: 299, rowsPending: 0 });
    expect(row.lastSyncStartedAt! <= row.lastSyncAt!).toBe(true);
  });

  test("changes found on different pages are embedded together, in one request", async () => {
    await w.sql`UPDATE docs SET body = 'first page' WHERE id = 3`;
    await w.sql`UPDATE docs SET body = 'second page' WHERE id = 290`; // past PAGE_SIZE (256) rows
    const [requests, before] = [w.fake.counters.served, inputs()];
    const result = (await runBatchPass(w.services, table.id))!;
    const [{ n }] = (await w.sql`SELECT count(*)::int AS n FROM docs`) as unknown as [{ n: number }];
    expect(result.counts).toMatchObject({ embedded: 2, unchanged: n - 2 });
    expect(inputs() - before).toBe(2);
    expect(w.fake.counters.served - requests).toBe(1);
    await matchesSource();
  });

  test("a metadata-only change costs no embedding call at all", async () => {
    await w.sql`UPDATE docs SET price = price + 1`;
    const before = inputs();
    const result = (await runBatchPass(w.services, table.id))!;
    expect(result.counts.metadata).toBe(299);
    expect(inputs() - before).toBe(0);
    await matchesSource();
  });

  test("a pass with nothing changed embeds nothing and writes nothing", async () => {
    const before = inputs();
    const result = (await runBatchPass(w.services, table.id))!;
    expect(result.counts).toMatchObject({ embedded: 0, metadata: 0, deleted: 0, unchanged: 299 });
    expect(inputs() - before).toBe(0);
  });

  test("pause stops sync; resume catches up on the next pass", async () => {
    await updateTableRow(w, table.id, { syncStatus: "paused" });
    await w.sql`UPDATE docs SET title = 'while paused' WHERE id = 20`;
    expect(await runBatchPass(w.services, table.id)).toBeNull();
    expect((await storedSet(w.services, table)).get("20")!.text).toBe("Title: title 20\nbody text of row 20");
    await updateTableRow(w, table.id, { syncStatus: "synced" });
    expect((await runBatchPass(w.services, table.id))!.counts.embedded).toBe(1);
    await matchesSource();
  });

  test("the sync interval becomes a croner pattern (seconds, or whole minutes past 59 s)", async () => {
    const { intervalPattern } = await import("../../../src/domains/sync/lifecycle.ts");
    expect(intervalPattern(1)).toBe("*/1 * * * * *");
    expect(intervalPattern(300)).toBe("0 */5 * * * *");
  });
});

describe("errors", () => {
  test("provider failures: error after repeated failed passes, recovery once the provider answers", async () => {
    await w.sql`UPDATE docs SET body = 'needs embedding' WHERE id = 30`;
    w.fake.set({ maxRequestTokens: 1 }); // every request now answers 400: a failure for good per call
    for (let i = 1; i <= 3; i++) {
      await expect(runBatchPass(w.services, table.id)).rejects.toThrow();
      const row = (await tableRow(w, table.id))!;
      expect(row.lastError).not.toBeNull();
      expect(row.syncStatus).toBe(i < 3 ? "synced" : "error");
    }
    w.fake.set({ maxRequestTokens: null });
    await runBatchPass(w.services, table.id);
    const row = (await tableRow(w, table.id))!;
    expect(row).toMatchObject({ syncStatus: "synced", lastError: null, lastErrorAt: null });
    await matchesSource();
  });
});

