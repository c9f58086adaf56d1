// Regression (issue 14, fault 4): with emb_a answering 503 for good while 5 rows changed,
// `rows_pending` stayed 0 while `staleness_secs` grew: a batch pass that found the changes and
// could not apply them left no trace of them. Now the changed rows a failed pass found are the
// table's backlog (sync/counters.ts), and for cdc every delivered key not yet applied is; both go
// back to 0 once the provider answers again and the changes are applied.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { VectorTableRow } from "../../src/domains/vector-tables/tables.ts";
import { runBatchPass } from "../../src/domains/sync/batch.ts";
import { stopSyncFor } from "../../src/domains/sync/lifecycle.ts";
import { eventually } from "../harness.ts";
import { json } from "../helpers/organizations.ts";
import { createWorld, enqueueFill, expectedSet, newVectorTable, storedTexts, tableRow, taskDone, textsOf, type World } from "../domains/sync/world.ts";

let w: World;
let batch: VectorTableRow;
let cdc: VectorTableRow;
beforeAll(async () => {
  w = await createWorld({ rows: 100 });
  w.services.scheduler.start();
  batch = await newVectorTable(w);
  cdc = await newVectorTable(w, { syncMode: "cdc" });
  await taskDone(w, (await enqueueFill(w, batch)).id);
  await taskDone(w, (await enqueueFill(w, cdc)).id);
});
afterAll(async () => {
  w.fake.set({ fail5xx: 0, retry5xxMs: null });
  await stopSyncFor(w.services, (await tableRow(w, cdc.id))!);
  await w.dispose();
});

const status = async (t: VectorTableRow) => json(await w.app.request("GET", `/v1/vector-tables/${t.id}/sync/status`, { headers: w.org.owner.key }));

describe("errors", () => {
  test("5 rows changed while the provider fails for good: rows_pending 5 in batch and cdc; 0 once it answers", async () => {
    // Each 503 asks for a retry 50 ms later (OpenAI's retry-after-ms): the driver's own back-off
    // (0.5 s doubling) would spend ~15 s before the pass gives up, which this test is not about.
    w.fake.set({ fail5xx: 1_000_000, retry5xxMs: 50 });
    for (let id = 1; id <= 5; id++) await w.sql`UPDATE docs SET body = ${`changed while failing ${id}`} WHERE id = ${id}`;

    // cdc: the stream delivered them and the consumer cannot apply them.
    const pending = await eventually(async () => {
      const s = await status(cdc);
      return s.rows_pending === 5 && s.staleness_secs > 0 && s;
    }, 40_000, 100);
    expect(pending.sync_status).not.toBe("pending");

    // batch: the pass found them and could not apply them.
    await expect(runBatchPass(w.services, batch.id)).rejects.toThrow("503");
    expect(await status(batch)).toMatchObject({ rows_pending: 5, sync_status: "synced" });
    expect((await tableRow(w, batch.id))!.lastError).toContain("503");

    w.fake.set({ fail5xx: 0 });
    await runBatchPass(w.services, batch.id);
    expect(await status(batch)).toMatchObject({ rows_pending: 0, sync_status: "synced", last_error: null });
    await eventually(async () => {
      const s = await status(cdc);
      return s.rows_pending === 0 && s.staleness_secs === 0 && s.sync_status === "synced";
    }, 40_000, 100);
    const expected = textsOf(await expectedSet(w.sql));
    expect(await storedTexts(w.services, batch)).toEqual(expected);
    expect(await storedTexts(w.services, cdc)).toEqual(expected);
    // The consumer's retries back off 0.2 s doubling (the world's 100 ms poll): a few seconds idle
    // once the failures mount, longer on a busy machine. Its own waits allow 40 s each.
  }, 90_000);
});
