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

  test("a registered type's own priority and attempts apply, and an enqueue may override them", async () => {
    await using app = await createTestApp();
    const queue = app.services.tasks;
    queue.register({ taskType: "backfill", priority: 2, maxAttempts: 4, timeoutMs: 5_000, payload: type("object"), handler: async () => {} });
    const byType = await queue.enqueue(app.services.database.db, { orgId: "o1", taskType: "backfill", targetId: "vt", payload: {} });
    const given = await queue.enqueue(app.services.database.db, { orgId: "o1", taskType: "backfill", targetId: "vt", payload: {}, priority: 1, maxAttempts: 1 });
    const plain = await queue.enqueue(app.services.database.db, { orgId: "o1", taskType: "rebackfill", targetId: "vt", payload: {} });
    expect([byType.priority, byType.maxAttempts, given.priority, given.maxAttempts, plain.priority, plain.maxAttempts]).toEqual([2, 4, 1, 1, 3, 3]);
  });
});
