// POST /v1/vector-tables/{id}/sync (docs/vector-tables.md#sync-now): a pass started by hand, the
// periodic one's, answered 202 with its history entry before it runs to its end; never two passes
// of a table at once, whoever asks; and the 409s.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { runBatchPass } from "../../../src/domains/sync/batch.ts";
import { BACKFILL } from "../../../src/domains/tasks/kinds.ts";
import { tasks } from "../../../src/scheduler/tables.ts";
import { stopSyncFor } from "../../../src/domains/sync/lifecycle.ts";
import type { VectorTableRow } from "../../../src/domains/vector-tables/tables.ts";
import { eventually } from "../../harness.ts";
import { json, readOnlyKey, type Bearer } from "../../helpers/organizations.ts";
import { createWorld, enqueueFill, newVectorTable, tableRow, taskDone, updateTableRow, type World } from "./world.ts";

let w: World;
let table: VectorTableRow;
beforeAll(async () => {
  w = await createWorld({ rows: 60 });
  w.services.scheduler.start();
  table = await newVectorTable(w);
  await taskDone(w, (await enqueueFill(w, table)).id);
});
afterAll(() => w.dispose());

const syncNow = (id: string, key: Bearer = w.org.owner.key) => w.app.request("POST", `/v1/vector-tables/${id}/sync`, { headers: key });
const entries = async (id: string) => (await json(await w.app.request("GET", `/v1/vector-tables/${id}/sync/history`, { headers: w.org.owner.key }))).data as { id: string; kind: string; status: string; rows_embedded: number; rows_deleted: number }[];
const entry = async (tableId: string, passId: string) => (await entries(tableId)).find((e) => e.id === passId);
const finished = (tableId: string, passId: string) => eventually(async () => {
  const e = await entry(tableId, passId);
  return e && e.status !== "running" && e;
}, 20_000);

async function expectError(res: Response, status: number, code: string) {
  expect([res.status, (await json(res)).error?.code]).toEqual([status, code]);
}

describe("happy", () => {
  test("202 with the pass's history entry; the pass then applies the source's changes and completes", async () => {
    await w.sql`UPDATE docs SET body = 'by hand ' || id WHERE id IN (1, 2)`;
    await w.sql`DELETE FROM docs WHERE id = 3`;
    const res = await syncNow(table.id);
    expect(res.status).toBe(202);
    const body = await json(res);
    expect(Object.keys(body).sort()).toEqual(["pass_id", "vector_table_id"]);
    expect(body.vector_table_id).toBe(table.id);
    expect(await entry(table.id, body.pass_id)).toBeDefined(); // there at once, running or already done
    expect(await finished(table.id, body.pass_id)).toMatchObject({ kind: "batch", status: "completed", rows_embedded: 2, rows_deleted: 1 });
    const row = (await tableRow(w, table.id))!;
    expect([row.syncStatus, row.totalRows, row.rowsPending]).toEqual(["synced", 59, 0]);
  });

  test("answers without waiting for the pass; a second request while it runs is 409 sync_running", async () => {
    w.fake.set({ latencyMs: 1_500 });
    try {
      await w.sql`UPDATE docs SET title = 'slow ' || id WHERE id = 4`;
      const started = Date.now();
      const first = await syncNow(table.id);
      expect(first.status).toBe(202);
      expect(Date.now() - started).toBeLessThan(1_500);
      await expectError(await syncNow(table.id), 409, "sync_running");
      // The periodic pass finds the slot taken too.
      expect(await runBatchPass(w.services, table.id)).toBeNull();
      const { pass_id } = await json(first);
      expect(await finished(table.id, pass_id)).toMatchObject({ status: "completed", rows_embedded: 1 });
    } finally {
      w.fake.set({ latencyMs: 0 });
    }
    // Once it ended, another may start.
    const again = await syncNow(table.id);
    expect(again.status).toBe(202);
    await finished(table.id, (await json(again)).pass_id);
  });

  test("of simultaneous requests exactly one starts a pass; the others are 409 sync_running", async () => {
    await w.sql`UPDATE docs SET title = 'raced ' || id WHERE id = 5`;
    const before = (await entries(table.id)).length;
    const answers = await Promise.all(Array.from({ length: 5 }, () => syncNow(table.id)));
    expect(answers.map((r) => r.status).sort()).toEqual([202, 409, 409, 409, 409]);
    const accepted = answers.find((r) => r.status === 202)!;
    expect(await finished(table.id, (await json(accepted)).pass_id)).toMatchObject({ status: "completed", rows_embedded: 1 });
    expect((await entries(table.id)).length).toBe(before + 1);
  });

  test("a tick and requests arriving together run exactly one pass", async () => {
    const before = (await entries(table.id)).length;
    const [tick, ...answers] = await Promise.all([runBatchPass(w.services, table.id), syncNow(table.id), syncNow(table.id), syncNow(table.id)]);
    const accepted = answers.filter((r) => r.status === 202);
    const refused = answers.filter((r) => r.status === 409);
    expect(accepted.length + (tick ? 1 : 0)).toBe(1);
    expect(refused.length).toBe(answers.length - accepted.length);
    for (const r of refused) expect((await json(r)).error.code).toBe("sync_running");
    for (const r of accepted) await finished(table.id, (await json(r)).pass_id);
    expect((await entries(table.id)).length).toBe(before + 1);
  });

  test("a cdc table gets a reconciling pass", async () => {
    const cdc = await newVectorTable(w, { syncMode: "cdc" });
    try {
      await taskDone(w, (await enqueueFill(w, cdc)).id);
      const res = await syncNow(cdc.id);
      expect(res.status).toBe(202);
      expect(await finished(cdc.id, (await json(res)).pass_id)).toMatchObject({ kind: "reconcile", status: "completed", rows_embedded: 0 });
    } finally {
      await stopSyncFor(w.services, (await tableRow(w, cdc.id))!);
    }
  });

  test("over tRPC: sync.start and sync.history", async () => {
    const start = await w.app.request("POST", "/trpc/sync.start", { headers: w.org.owner.key, body: { vector_table_id: table.id } });
    expect(start.status).toBe(200);
    const { pass_id } = (await json(start)).result.data;
    await finished(table.id, pass_id);
    const input = encodeURIComponent(JSON.stringify({ vector_table_id: table.id, limit: 1 }));
    const page = (await json(await w.app.request("GET", `/trpc/sync.history?input=${input}`, { headers: w.org.owner.key }))).result.data;
    expect(page.data.map((e: { id: string }) => e.id)).toEqual([pass_id]);
    expect(page.pagination).toMatchObject({ limit: 1, has_more: true });
  });
});

describe("errors", () => {
  test("paused → 409 already_paused", async () => {
    await updateTableRow(w, table.id, { syncStatus: "paused" });
    try {
      await expectError(await syncNow(table.id), 409, "already_paused");
    } finally {
      await updateTableRow(w, table.id, { syncStatus: "synced" });
    }
  });

  test("before the first backfill → 409 vector_table_not_ready", async () => {
    const fresh = await newVectorTable(w);
    const res = await syncNow(fresh.id);
    expect(res.status).toBe(409);
    expect((await json(res)).error).toMatchObject({ code: "vector_table_not_ready", details: { sync_status: "pending" } });
  });

  test("a re-backfill owed (its configuration changed) → 409 vector_table_not_ready", async () => {
    const stale = await newVectorTable(w, { syncStatus: "error", configVersion: 2, servedConfigVersion: 1 });
    await expectError(await syncNow(stale.id), 409, "vector_table_not_ready");
  });

  test("while a backfill is pending or running → 409 sync_running", async () => {
    const other = await newVectorTable(w, { syncStatus: "synced" });
    // A backfill queued for later (no worker takes it during the test), in one transaction.
    await w.services.database.db.transaction(async (tx) => {
      const task = await w.services.tasks.enqueue(tx, BACKFILL, { orgId: other.orgId, targetId: other.id, payload: { vector_table_id: other.id, config_version: 1 }, exclusiveKey: `backfill:${other.id}` });
      await tx.update(tasks).set({ runAfter: "2999-01-01T00:00:00.000Z" }).where(eq(tasks.id, task.id));
    });
    // Seen by its task even when the table's status says `synced`…
    await expectError(await syncNow(other.id), 409, "sync_running");
    // …and by the table's status.
    await updateTableRow(w, other.id, { syncStatus: "backfilling" });
    await expectError(await syncNow(other.id), 409, "sync_running");
  });

  test("a read_only key → 403 insufficient_permission; a JWT or no credential → 401", async () => {
    await expectError(await syncNow(table.id, await readOnlyKey(w.app, w.org.owner)), 403, "insufficient_permission");
    await expectError(await syncNow(table.id, w.org.owner.jwt), 401, "unauthorized");
    expect((await w.app.request("POST", `/v1/vector-tables/${table.id}/sync`)).status).toBe(401);
  });

  test("an unknown table → 404", async () => {
    await expectError(await syncNow("0000000000000000000000000a"), 404, "not_found");
  });
});
