// Regression (issue 42, back-pressure that tells the truth): with every embedding request answered
// 503, a batch pass that found 5 changed rows kept retrying for a minute while the table read
// `synced`, rows_pending 0 and last_error null; only its final failure said anything. Now the
// changed rows count as pending as soon as the pass goes to apply them, and last_error says what
// the provider answered on its first failed attempt; both clear once it answers again.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { VectorTableRow } from "../../src/domains/vector-tables/tables.ts";
import { runBatchPass } from "../../src/domains/sync/batch.ts";
import { eventually } from "../harness.ts";
import { json } from "../helpers/organizations.ts";
import { createWorld, enqueueFill, newVectorTable, taskDone, type World } from "../domains/sync/world.ts";

let w: World;
let batch: VectorTableRow;
beforeAll(async () => {
  w = await createWorld({ rows: 50 });
  w.services.scheduler.start();
  batch = await newVectorTable(w);
  await taskDone(w, (await enqueueFill(w, batch)).id);
});
afterAll(async () => {
  w.fake.set({ fail5xx: 0 });
  await w.dispose();
});

const status = async () => json(await w.app.request("GET", `/v1/vector-tables/${batch.id}/sync/status`, { headers: w.org.owner.key }));

describe("errors", () => {
  test("a persistent 503 during a batch pass: rows_pending 5 and last_error naming the 503 within 2 s of the first one; 0 and null after recovery", async () => {
    w.fake.set({ fail5xx: 1_000_000 });
    for (let id = 1; id <= 5; id++) await w.sql`UPDATE docs SET body = ${`changed while failing ${id}`} WHERE id = ${id}`;
    const before = w.fake.requests.length;

    const pass = runBatchPass(w.services, batch.id);
    const firstFailure = await eventually(() => w.fake.requests.slice(before).find((r) => r.status === 503), 20_000, 5);
    const seen = await eventually(async () => {
      const s = await status();
      return s.rows_pending >= 5 && String(s.last_error).includes("503") && s;
    }, 20_000, 20);
    // The same clock as the fake's record of the request (performance.now() in this process).
    expect(performance.now() - firstFailure.atMs).toBeLessThan(2_000);
    expect(seen).toMatchObject({ rows_pending: 5, sync_status: "synced" });
    expect(seen.last_error).toContain("retrying");

    w.fake.set({ fail5xx: 0 });
    await pass; // its next attempt goes through
    expect(await status()).toMatchObject({ rows_pending: 0, sync_status: "synced", last_error: null });
  }, 90_000);
});
