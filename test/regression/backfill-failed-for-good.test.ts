// Regression (issue 12, item 5): a backfill that failed for good by the runner's own path (runs
// kept dying with their process, so no handler ran) left its table `backfilling` forever with
// `last_error` null, and a later POST …/backfill started again from row 0. Now the failure moves
// the table to `error` with `last_error` in the same transaction, and POST …/backfill resumes from
// the checkpoint the failed task left.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { tasks } from "../../src/scheduler/tables.ts";
import type { TaskProgress } from "../../src/scheduler/types.ts";
import { eventually } from "../harness.ts";
import { deadRun } from "../scheduler/helpers.ts";
import { createWorld, expectedSet, newVectorTable, storedTexts, tableRow, taskDone, textsOf, type World } from "../domains/sync/world.ts";

const ROWS = 3000;
let w: World;
beforeAll(async () => {
  w = await createWorld({ rows: ROWS, fakeLatencyMs: 30 });
});
afterAll(() => w.dispose());

const taskRow = async (id: string) => (await w.services.database.db.select().from(tasks).where(eq(tasks.id, id)))[0]!;
const backfillsOf = (tableId: string) => w.services.database.db.select().from(tasks).where(and(eq(tasks.targetId, tableId), eq(tasks.taskType, "backfill")));

describe("happy", () => {
  test("dead runs fail the task for good → table error with last_error; POST backfill resumes from its checkpoint", async () => {
    const table = await newVectorTable(w);
    const post = () => w.app.request("POST", `/v1/vector-tables/${table.id}/backfill`, { headers: w.org.owner.key });
    expect((await post()).status).toBe(200);
    const [first] = await backfillsOf(table.id);

    // One real run that stores some pages, handed back at shutdown with its checkpoint...
    w.services.scheduler.start();
    await eventually(async () => ((await taskRow(first!.id)).progress as TaskProgress).rows_processed >= 512, 20_000, 5);
    await w.services.scheduler.stop();
    const checkpoint = (await taskRow(first!.id)).progress as TaskProgress;
    expect(checkpoint.rows_processed).toBeLessThan(ROWS);
    // ...then three runs whose process died before saving anything (an OOM-kill loop).
    for (let i = 0; i < 3; i++) await deadRun(w.services.database, first!.id, null);

    w.services.scheduler.start();
    const failed = await eventually(async () => {
      const t = await taskRow(first!.id);
      return t.status === "failed" && t;
    }, 20_000);
    expect(failed.lastError).toContain("its worker died");
    expect(await tableRow(w, table.id)).toMatchObject({ syncStatus: "error", lastError: failed.lastError, syncedRows: checkpoint.rows_processed });

    const inputs = w.fake.counters.inputs;
    expect((await post()).status).toBe(200);
    const second = (await backfillsOf(table.id)).find((t) => t.id !== first!.id)!;
    expect(second.progress).toEqual(checkpoint);
    await taskDone(w, second.id);
    // Only the rows after the checkpoint were embedded; nothing from row 0 again.
    expect(w.fake.counters.inputs - inputs).toBe(ROWS - checkpoint.rows_processed);
    expect(await tableRow(w, table.id)).toMatchObject({ syncStatus: "synced", lastError: null, syncedRows: ROWS, totalRows: ROWS });
    expect(await storedTexts(w.services, table)).toEqual(textsOf(await expectedSet(w.sql)));
  });
});
