// The scheduler as the service wires it: services.tasks, services.scheduler and /readyz.
import { describe, expect, test } from "bun:test";
import { type } from "arktype";
import { eq } from "drizzle-orm";
import { BACKFILL, ORG_DELETION, REBACKFILL } from "../../src/domains/tasks/kinds.ts";
import type { TaskService } from "../../src/scheduler/scheduler.ts";
import { tasks } from "../../src/scheduler/tables.ts";
import { registerTasks } from "../../src/wiring.ts";
import { createTestApp, eventually } from "../harness.ts";

describe("happy", () => {
  test("services.tasks queues with the registered defaults and the started scheduler runs it", async () => {
    await using app = await createTestApp({ env: { VECSYNC_WORKERS: "1" } });
    const { tasks: queue, scheduler, database } = app.services;
    // org_deletion is registered by the service itself; deleting an organization that has no
    // records left is a no-op that completes (the handler is idempotent).
    const row = await database.db.transaction((tx) => queue.enqueue(tx, ORG_DELETION, { orgId: "o1", targetId: "o1", payload: { organization_id: "o1" } }));
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

  test("the service registers every task type with each kind's documented defaults (docs/api.md#tasks), and an enqueue may override them", async () => {
    await using app = await createTestApp();
    const queue = app.services.tasks;
    expect(() => queue.register({ ...BACKFILL, payload: type("object") }, { timeoutMs: 5_000, handler: async () => {} })).toThrow("already registered");
    const db = app.services.database.db;
    const backfill = await queue.enqueue<unknown>(db, BACKFILL, { orgId: "o1", targetId: "vt", payload: {} });
    const rebackfill = await queue.enqueue<unknown>(db, REBACKFILL, { orgId: "o1", targetId: "vt", payload: {} });
    const deletion = await queue.enqueue<unknown>(db, ORG_DELETION, { orgId: "o1", targetId: "o1", payload: {} });
    const given = await queue.enqueue<unknown>(db, BACKFILL, { orgId: "o1", targetId: "vt", payload: {}, priority: 1, maxAttempts: 1 });
    expect([backfill, rebackfill, deletion, given].map((t) => [t.priority, t.maxAttempts])).toEqual([[3, 3], [3, 3], [7, 5], [1, 1]]);
  });

  test("the fills are bound as long (one per organization while others wait, scheduler/queue.ts); organization deletion is not", async () => {
    await using app = await createTestApp();
    const bound = new Map<string, boolean>();
    const recording: TaskService = { ...app.services.tasks, register: (kind, binding) => void bound.set(kind.taskType, binding.long ?? false) };
    registerTasks({ ...app.services, tasks: recording });
    expect(Object.fromEntries(bound)).toEqual({ backfill: true, rebackfill: true, org_deletion: false });
  });
});
