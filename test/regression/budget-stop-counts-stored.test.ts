// Regression (issue 14, fault 2): with VECSYNC_FREE_VECTOR_BUDGET=250, table A of 200 rows, then a
// backfill of table B (200 rows) stopped at the budget reported `synced_rows 200` and task
// `rows_processed 200` while 50 of B's vectors were stored, and a later backfill (budget raised)
// resumed after row 200, so the other 150 rows were never stored. Now the page is cut at the
// first row over the budget: the checkpoint covers the stored prefix, `synced_rows` is the stored
// count, and the resumed backfill starts at the first row not stored.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { organizations } from "../../src/domains/organizations/tables.ts";
import { tasks } from "../../src/scheduler/tables.ts";
import { eventually } from "../harness.ts";
import { json } from "../helpers/organizations.ts";
import { createWorld, expectedSet, newVectorTable, storedTexts, tableRow, taskDone, textsOf, type World } from "../domains/sync/world.ts";

let w: World;
beforeAll(async () => {
  w = await createWorld({ rows: 200, env: { VECSYNC_FREE_VECTOR_BUDGET: "250" } });
  w.services.scheduler.start();
});
afterAll(() => w.dispose());

const backfillsOf = (tableId: string) => w.services.database.db.select().from(tasks).where(and(eq(tasks.targetId, tableId), eq(tasks.taskType, "backfill"))).orderBy(tasks.createdAt);
const post = async (tableId: string) => expect((await w.app.request("POST", `/v1/vector-tables/${tableId}/backfill`, { headers: w.org.owner.key })).status).toBe(200);
const status = async (tableId: string) => json(await w.app.request("GET", `/v1/vector-tables/${tableId}/sync/status`, { headers: w.org.owner.key }));

describe("happy", () => {
  test("B stopped at the budget counts the 50 rows stored; raised, POST backfill stores the other 150, none twice", async () => {
    const a = await newVectorTable(w);
    await post(a.id);
    await taskDone(w, (await backfillsOf(a.id))[0]!.id);
    expect(await tableRow(w, a.id)).toMatchObject({ syncStatus: "synced", totalRows: 200, syncedRows: 200 });

    const b = await newVectorTable(w);
    const inputs = w.fake.counters.inputs;
    await post(b.id);
    const first = await eventually(async () => {
      const [t] = await backfillsOf(b.id);
      return t?.status === "failed" && t;
    }, 20_000);
    expect(first.progress).toMatchObject({ rows_processed: 50, last_processed_pk: "50" });
    expect(await w.services.vectors.count(b.vectorstoreCollection)).toBe(50);
    expect(w.fake.counters.inputs - inputs).toBe(50);
    const row = (await tableRow(w, b.id))!;
    expect(row).toMatchObject({ syncStatus: "error", totalRows: 200, syncedRows: 50 });
    expect(row.lastError).toContain("VECSYNC_FREE_VECTOR_BUDGET");
    expect((await status(b.id)).rows_pending).toBe(150);

    // The budget no longer applies (a tier without one), and the backfill is asked for again.
    await w.services.database.db.update(organizations).set({ tier: "team" }).where(eq(organizations.id, w.org.id));
    await post(b.id);
    const second = (await backfillsOf(b.id)).find((t) => t.id !== first.id)!;
    await taskDone(w, second.id);
    expect(w.fake.counters.inputs - inputs).toBe(200); // rows 51-200 once each, rows 1-50 not again
    expect(await tableRow(w, b.id)).toMatchObject({ syncStatus: "synced", totalRows: 200, syncedRows: 200, lastError: null });
    expect((await status(b.id)).rows_pending).toBe(0);
    expect(await storedTexts(w.services, b)).toEqual(textsOf(await expectedSet(w.sql)));
  });
});
