// Regression (issue 14, item 5): a provider that answered 200 without `data` twice during a
// backfill failed the task for good at attempt 1 of 3 and turned the table `error`. A malformed,
// wrong-count or wrong-size answer is now the provider's transient fault: the driver asks again
// (a few times within the request), then the task retries with the table still `backfilling`;
// a batch pass or a cdc apply meeting one does not fail, let alone turn the table `error`.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { runBatchPass } from "../../src/domains/sync/batch.ts";
import { stopSyncFor } from "../../src/domains/sync/lifecycle.ts";
import { tasks } from "../../src/scheduler/tables.ts";
import type { SyncStatus, VectorTableRow } from "../../src/domains/vector-tables/tables.ts";
import { eventually } from "../harness.ts";
import { createWorld, enqueueFill, expectedSet, newVectorTable, sortedEntries, storedSet, tableRow, taskDone, type World } from "../domains/sync/world.ts";

const ROWS = 600; // three pages of 256: the bad answers land mid-backfill, not on the last page
let w: World;
beforeAll(async () => {
  w = await createWorld({ rows: ROWS });
  w.services.scheduler.start();
});
afterAll(() => w.dispose());
// A test that failed must not leave bad answers queued for the next one.
beforeEach(() => w.fake.set({ malformed: 0, wrongCount: 0, wrongDimensions: 0 }));

const taskRow = async (id: string) => (await w.services.database.db.select().from(tasks).where(eq(tasks.id, id)))[0]!;
/** The task once it finished, either way (a failed one fails the test at its status, not by a time-out). */
const finished = (id: string, timeoutMs = 20_000) =>
  eventually(async () => {
    const t = await taskRow(id);
    return (t.status === "completed" || t.status === "failed") && t;
  }, timeoutMs);
const matchesSource = async (table: VectorTableRow) => expect(sortedEntries(await storedSet(w.services, table))).toEqual(sortedEntries(await expectedSet(w.sql)));

/** Every status the table shows until `until` resolves (polled, so a lasting `error` cannot hide). */
async function statusesWhile(tableId: string, until: Promise<unknown>): Promise<Set<SyncStatus>> {
  const seen = new Set<SyncStatus>();
  let done = false;
  const watching = (async () => {
    while (!done) {
      seen.add((await tableRow(w, tableId))!.syncStatus);
      await Bun.sleep(5);
    }
  })();
  try {
    await until;
  } finally {
    done = true;
    await watching;
  }
  seen.add((await tableRow(w, tableId))!.syncStatus);
  return seen;
}

const BAD = ["malformed", "wrongCount", "wrongDimensions"] as const;

describe("backfill", () => {
  test.each(BAD)("two %s answers: the request asks again and the backfill completes in its first run", async (kind) => {
    const table = await newVectorTable(w);
    w.fake.set({ [kind]: 2 });
    const task = await enqueueFill(w, table);
    const seen = await statusesWhile(table.id, finished(task.id));
    expect(await taskRow(task.id)).toMatchObject({ status: "completed", attempts: 1 });
    expect([...seen]).not.toContain("error");
    expect(w.fake.switches[kind]).toBe(0); // both bad answers were served
    expect(await tableRow(w, table.id)).toMatchObject({ syncStatus: "synced", syncedRows: ROWS, totalRows: ROWS, lastError: null });
    await matchesSource(table);
  });

  test("more bad answers than one request takes: the task retries, the table stays backfilling with last_error, then synced", async () => {
    const table = await newVectorTable(w);
    // Three in a row exhaust the request's retries (hosted.ts); the next run of the task succeeds.
    w.fake.set({ wrongCount: 3 });
    const task = await enqueueFill(w, table);
    const noted = eventually(async () => {
      const row = (await tableRow(w, table.id))!;
      return row.lastError !== null && row;
    }, 20_000);
    const seen = await statusesWhile(table.id, finished(task.id, 30_000));
    expect(await taskRow(task.id)).toMatchObject({ status: "completed", attempts: 2 });
    const during = await noted;
    expect(during.syncStatus).toBe("backfilling");
    expect(during.lastError).toContain("embeddings");
    expect([...seen]).not.toContain("error");
    expect(await tableRow(w, table.id)).toMatchObject({ syncStatus: "synced", syncedRows: ROWS, lastError: null });
    await matchesSource(table);
  }, 40_000);
});

describe("sync", () => {
  test("a batch pass meeting two malformed answers goes through at once", async () => {
    const table = await newVectorTable(w);
    await taskDone(w, (await enqueueFill(w, table)).id);
    await w.sql`UPDATE docs SET body = 'changed for the pass ' || id WHERE id <= 3`;
    w.fake.set({ malformed: 2 });
    const result = await runBatchPass(w.services, table.id);
    expect(result!.counts.embedded).toBe(3);
    expect(await tableRow(w, table.id)).toMatchObject({ syncStatus: "synced", lastError: null });
    await matchesSource(table);
  });

  test("a batch pass whose request gets only bad answers fails, keeps the table synced, and the next pass recovers", async () => {
    const table = await newVectorTable(w);
    await taskDone(w, (await enqueueFill(w, table)).id);
    await w.sql`UPDATE docs SET body = 'changed again ' || id WHERE id <= 3`;
    w.fake.set({ wrongDimensions: 3 });
    expect(await runBatchPass(w.services, table.id).catch((e: Error) => e.message)).toContain("dimensions");
    expect(await tableRow(w, table.id)).toMatchObject({ syncStatus: "synced" });
    expect((await tableRow(w, table.id))!.lastError).toContain("dimensions");
    await runBatchPass(w.services, table.id);
    expect(await tableRow(w, table.id)).toMatchObject({ syncStatus: "synced", lastError: null });
    await matchesSource(table);
  });

  test("a cdc apply meeting two malformed answers applies the change without a failure", async () => {
    const table = await newVectorTable(w, { syncMode: "cdc" });
    await taskDone(w, (await enqueueFill(w, table)).id);
    try {
      w.fake.set({ malformed: 2 });
      const served = w.fake.counters.served;
      await w.sql`UPDATE docs SET body = 'streamed while the provider misbehaves' WHERE id = 10`;
      const seen = await statusesWhile(
        table.id,
        eventually(async () => (await storedSet(w.services, table)).get("10")?.text.includes("misbehaves"), 15_000),
      );
      expect([...seen]).toEqual(["synced"]);
      expect(w.fake.switches.malformed).toBe(0);
      expect(w.fake.counters.served - served).toBeGreaterThanOrEqual(3); // two bad answers, then the good one
      expect((await tableRow(w, table.id))!.lastError).toBeNull();
      await matchesSource(table);
    } finally {
      await stopSyncFor(w.services, (await tableRow(w, table.id))!);
    }
  });
});
