// Regression (issue 12, item 4): right after a vector table read `synced`, its backfill task still
// read `running`: the handler marked the table in one commit and the runner completed the task in
// a later one. Now both change in one transaction. The observer is a SQLite trigger: it fires in
// the very transaction that turns the table `synced` and records what the task's status is at
// that instant, so there is no timing to win or lose (before the fix it saw `running` every time).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { tasks } from "../../src/scheduler/tables.ts";
import { createWorld, enqueueFill, newVectorTable, tableRow, taskDone, updateTableRow, type World } from "../domains/sync/world.ts";

let w: World;
beforeAll(async () => {
  w = await createWorld({ rows: 600 });
  await w.services.database.client.execute("CREATE TABLE synced_seen (table_id TEXT, task_id TEXT, task_status TEXT)");
  await w.services.database.client.execute(`
    CREATE TRIGGER synced_seen_trigger AFTER UPDATE OF sync_status ON vector_tables
    WHEN NEW.sync_status = 'synced' AND OLD.sync_status <> 'synced'
    BEGIN
      INSERT INTO synced_seen SELECT NEW.id, id, status FROM tasks
        WHERE target_id = NEW.id AND task_type IN ('backfill', 'rebackfill') ORDER BY created_at DESC, rowid DESC LIMIT 1;
    END`);
  w.services.scheduler.start();
});
afterAll(() => w.dispose());

const seen = async (tableId: string) =>
  (await w.services.database.client.execute({ sql: "SELECT task_id, task_status FROM synced_seen WHERE table_id = ?", args: [tableId] })).rows.map((r) => [r.task_id, r.task_status]);

describe("happy", () => {
  test("a backfill's task is completed in the commit that turns its table synced", async () => {
    const table = await newVectorTable(w);
    const task = await enqueueFill(w, table);
    await taskDone(w, task.id);
    expect((await tableRow(w, table.id))!.syncStatus).toBe("synced");
    expect(await seen(table.id)).toEqual([[task.id, "completed"]]);
  });

  test("so is a re-backfill's, at the swap", async () => {
    const table = await newVectorTable(w);
    await taskDone(w, (await enqueueFill(w, table)).id);
    await updateTableRow(w, table.id, { embeddingDimensions: 24, configVersion: 2, syncStatus: "pending_rebackfill" });
    const task = await enqueueFill(w, table, "rebackfill");
    await taskDone(w, task.id);
    const [row] = await w.services.database.db.select().from(tasks).where(eq(tasks.id, task.id));
    expect(row!.status).toBe("completed");
    expect(await seen(table.id)).toHaveLength(2);
    expect((await seen(table.id))[1]).toEqual([task.id, "completed"]);
    expect((await tableRow(w, table.id))!).toMatchObject({ syncStatus: "synced", servingDimensions: 24, servedConfigVersion: 2 });
  });
});
