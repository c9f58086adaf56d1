// The scheduler as the service wires it: services.tasks, services.scheduler and /readyz.
import { describe, expect, test } from "bun:test";
import { type } from "arktype";
import { eq } from "drizzle-orm";
import { tasks } from "../../src/scheduler/tables.ts";
import { createTestApp, eventually } from "../harness.ts";

describe("happy", () => {
  test("services.tasks queues with the registered defaults and the started scheduler runs it", async () => {
    await using app = await createTestApp({ env: { VECSYNC_WORKERS: "1" } });
    const { tasks: queue, scheduler, database } = app.services;
    // org_deletion is registered by the service itself; deleting an organization that has no
    // records left is a no-op that completes (the handler is idempotent).
    const row = await database.db.transaction((tx) => queue.enqueue(tx, { orgId: "o1", taskType: "org_deletion", targetId: "o1", payload: { organization_id: "o1" } }));
    expect(row).toMatchObject({ status: "pending", priority: 7, maxAttempts: 5, attempts: 0 });
    expect(scheduler.running).toBe(false);
    expect((await app.request("GET", "/readyz")).status).toBe(503);
    scheduler.start();
    expect(scheduler.running).toBe(true);
    expect((await app.request("GET", "/readyz")).status).toBe(200);
    await eventually(async () => (await database.db.select().from(tasks).where(eq(tasks.id, row.id)))[0]?.status === "completed");
    await scheduler.stop();
    expect(scheduler.running).toBe(false);
  });

  test("the service registers every task type with SPEC 2.10's defaults, and an enqueue may override them", async () => {
    await using app = await createTestApp();
    const queue = app.services.tasks;
    expect(() => queue.register({ taskType: "backfill", timeoutMs: 5_000, payload: type("object"), handler: async () => {} })).toThrow("already registered");
    const db = app.services.database.db;
    const backfill = await queue.enqueue(db, { orgId: "o1", taskType: "backfill", targetId: "vt", payload: {} });
    const rebackfill = await queue.enqueue(db, { orgId: "o1", taskType: "rebackfill", targetId: "vt", payload: {} });
    const deletion = await queue.enqueue(db, { orgId: "o1", taskType: "org_deletion", targetId: "o1", payload: {} });
    const given = await queue.enqueue(db, { orgId: "o1", taskType: "backfill", targetId: "vt", payload: {}, priority: 1, maxAttempts: 1 });
    expect([backfill, rebackfill, deletion, given].map((t) => [t.priority, t.maxAttempts])).toEqual([[3, 3], [3, 3], [7, 5], [1, 1]]);
  });
});
