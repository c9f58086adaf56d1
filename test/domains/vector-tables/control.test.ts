// POST …/backfill (one winner among simultaneous requests), GET …/sync/status, POST
// …/sync/pause and …/sync/resume (docs/vector-tables.md#states). No worker runs here: the
// queued task stays pending, as the engine's own tests take it from there.
import { describe, expect, test, setDefaultTimeout } from "bun:test";
import { FakeClock } from "../../../src/shared/clock.ts";
import { type TestApp } from "../../harness.ts";
import { json, readOnlyKey, type Bearer, type TestOrg } from "../../helpers/organizations.ts";
import { activeTasksOf, newTable, setTableState, tableBody, type Fixture, useTableWorld } from "./helpers.ts";

// Starts processes or databases: slower than bun's 5 s default on a loaded 2-core machine.
setDefaultTimeout(30_000);

const clock = new FakeClock(new Date("2030-05-01T12:00:00Z"));
let app: TestApp, org: TestOrg, f: Fixture;
useTableWorld({ clock }, (w) => ({ app, org, f } = w));

const post = (id: string, action: string, key: Bearer = org.owner.key) => app.request("POST", `/v1/vector-tables/${id}/${action}`, { headers: key });
const status = async (id: string) => json(await app.request("GET", `/v1/vector-tables/${id}/sync/status`, { headers: org.owner.key }));
const answer = async (res: Response) => ({ status: res.status, body: await json(res) });

describe("happy", () => {
  test("backfill: 200 with the current numbers, the table backfilling, one backfill task queued", async () => {
    const t = await newTable(app, org.owner.key, tableBody(f));
    await setTableState(app, t.id, { totalRows: 40, syncedRows: 12 });
    expect(await answer(await post(t.id, "backfill"))).toEqual({ status: 200, body: { vector_table_id: t.id, status: "backfilling", total_rows: 40, synced_rows: 12 } });
    expect((await status(t.id)).sync_status).toBe("backfilling");
    const tasks = await activeTasksOf(app, t.id);
    expect(tasks.map((x) => [x.taskType, x.priority, x.maxAttempts, x.payload])).toEqual([["backfill", 3, 3, { vector_table_id: t.id, config_version: 1 }]]);
  });

  test("20 simultaneous backfill requests: exactly one 200, the rest 409 backfill_running, one task", async () => {
    const t = await newTable(app, org.owner.key, tableBody(f));
    const all = await Promise.all(Array.from({ length: 20 }, () => post(t.id, "backfill").then(answer)));
    expect(all.filter((a) => a.status === 200)).toHaveLength(1);
    expect(all.filter((a) => a.status === 409 && a.body.error.code === "backfill_running")).toHaveLength(19);
    expect(await activeTasksOf(app, t.id)).toHaveLength(1);
  });

  test("sync status: the engine's backlog, staleness by mode, errors with their time", async () => {
    const t = await newTable(app, org.owner.key, tableBody(f));
    expect(await status(t.id)).toEqual({ vector_table_id: t.id, sync_status: "pending", last_sync_at: null, rows_pending: 0, staleness_secs: 0, last_error: null, last_error_at: null });
    // The engine's backlog as it is: during a fill it writes total − synced itself (sync/counters.ts).
    await setTableState(app, t.id, { syncStatus: "backfilling", totalRows: 100, syncedRows: 30, rowsPending: 7 });
    expect((await status(t.id)).rows_pending).toBe(7);
    const started = new Date(clock.now().getTime() - 90_000).toISOString();
    await setTableState(app, t.id, { syncStatus: "error", lastSyncStartedAt: started, lastSyncAt: clock.now().toISOString(), lastError: "source down", lastErrorAt: started });
    expect(await status(t.id)).toEqual({ vector_table_id: t.id, sync_status: "error", last_sync_at: clock.now().toISOString(), rows_pending: 7, staleness_secs: 90, last_error: "source down", last_error_at: started });
    await setTableState(app, t.id, { syncMode: "cdc", oldestPendingChangeAt: new Date(clock.now().getTime() - 4_500).toISOString() });
    expect((await status(t.id)).staleness_secs).toBe(4);
    await setTableState(app, t.id, { oldestPendingChangeAt: null });
    expect((await status(t.id)).staleness_secs).toBe(0);
  });

  test("pause from any state but paused, resume only from paused → synced", async () => {
    const t = await newTable(app, org.owner.key, tableBody(f));
    for (const from of ["pending", "backfilling", "synced", "error", "pending_rebackfill"] as const) {
      await setTableState(app, t.id, { syncStatus: from });
      const paused = await answer(await post(t.id, "sync/pause"));
      expect(paused).toEqual({ status: 200, body: { vector_table_id: t.id, sync_status: "paused", message: expect.any(String) } });
      expect((await status(t.id)).sync_status).toBe("paused");
    }
    expect(await answer(await post(t.id, "sync/resume"))).toEqual({ status: 200, body: { vector_table_id: t.id, sync_status: "synced", message: expect.any(String) } });
    expect((await status(t.id)).sync_status).toBe("synced");
  });

  test("tRPC backfill, syncStatus, pause, resume", async () => {
    const t = await newTable(app, org.owner.key, tableBody(f));
    const rpc = async (name: string) => (await json(await app.request("POST", `/trpc/vectorTables.${name}`, { headers: org.owner.key, body: { vector_table_id: t.id } }))).result?.data;
    expect(await rpc("backfill")).toMatchObject({ status: "backfilling" });
    expect(await rpc("pause")).toMatchObject({ sync_status: "paused" });
    expect(await rpc("resume")).toMatchObject({ sync_status: "synced" });
    const res = await app.request("GET", `/trpc/vectorTables.syncStatus?input=${encodeURIComponent(JSON.stringify({ vector_table_id: t.id }))}`, { headers: org.owner.key });
    expect((await json(res)).result.data).toMatchObject({ vector_table_id: t.id, sync_status: "synced" });
  });
});

describe("errors", () => {
  test("pause when paused → 409 already_paused; resume when not paused → 409 not_paused", async () => {
    const t = await newTable(app, org.owner.key, tableBody(f));
    expect((await answer(await post(t.id, "sync/resume"))).body.error.code).toBe("not_paused");
    await post(t.id, "sync/pause");
    const again = await answer(await post(t.id, "sync/pause"));
    expect([again.status, again.body.error.code]).toEqual([409, "already_paused"]);
  });

  test("two simultaneous pauses: one 200, one 409", async () => {
    const t = await newTable(app, org.owner.key, tableBody(f));
    const both = await Promise.all([post(t.id, "sync/pause"), post(t.id, "sync/pause")]);
    expect(both.map((r) => r.status).sort()).toEqual([200, 409]);
  });

  test("a backfill while a rebackfill is pending → 409 backfill_running", async () => {
    const t = await newTable(app, org.owner.key, tableBody(f));
    await app.request("PUT", `/v1/vector-tables/${t.id}`, { headers: org.owner.key, body: { embedding_dimensions: 32 } });
    const res = await answer(await post(t.id, "backfill"));
    expect([res.status, res.body.error.code]).toEqual([409, "backfill_running"]);
    expect((await status(t.id)).sync_status).toBe("pending_rebackfill");
  });
});

describe("authz", () => {
  test("a read_only key may read the status, not backfill, pause or resume", async () => {
    const t = await newTable(app, org.owner.key, tableBody(f));
    const ro = await readOnlyKey(app, org.owner);
    expect((await app.request("GET", `/v1/vector-tables/${t.id}/sync/status`, { headers: ro })).status).toBe(200);
    for (const action of ["backfill", "sync/pause", "sync/resume"]) {
      const res = await answer(await post(t.id, action, ro));
      expect([action, res.status, res.body.error.code]).toEqual([action, 403, "insufficient_permission"]);
    }
    expect(await activeTasksOf(app, t.id)).toEqual([]);
  });
});
