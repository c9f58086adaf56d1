import { describe, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import { isUniqueViolation } from "../../src/db/executor.ts";
import { tasks } from "../../src/scheduler/tables.ts";
import { TaskCatalog } from "../../src/scheduler/catalog.ts";
import { enqueue } from "../../src/scheduler/enqueue.ts";
import { claimNext } from "../../src/scheduler/queue.ts";
import { AppError, DriverError } from "../../src/shared/errors.ts";
import { createTestApp, eventually } from "../harness.ts";
import { DELETION, FILL, REFILL, queueWorld, runnerFor, taskRow } from "./helpers.ts";

const base = { orgId: "org1", targetId: "t1" };

describe("happy", () => {
  test("lower priority runs first, then the oldest", async () => {
    await using world = await queueWorld();
    const db = world.database.db;
    const t0 = Date.UTC(2026, 0, 1);
    // Enqueued out of order on purpose; created_at decides within a priority.
    await enqueue(db, DELETION, { ...base, payload: { n: 1 }, now: new Date(t0) }); // priority 7
    await enqueue(db, FILL, { ...base, payload: { n: 2 }, priority: 5, now: new Date(t0 + 2) });
    await enqueue(db, FILL, { ...base, payload: { n: 3 }, now: new Date(t0 + 3) }); // priority 3
    await enqueue(db, FILL, { ...base, payload: { n: 4 }, priority: 5, now: new Date(t0 + 1) });
    const order: number[] = [];
    const catalog = new TaskCatalog();
    for (const kind of [FILL, DELETION]) {
      catalog.register(kind, { timeoutMs: 5_000, handler: async ({ payload }) => void order.push(payload.n) });
    }
    await using runner = runnerFor(world.database, catalog, { workers: 1 });
    runner.start();
    await eventually(() => order.length === 4);
    expect(order).toEqual([3, 4, 2, 1]);
  });

  test("success marks the task completed with finished_at; progress from checkpoints is kept", async () => {
    await using world = await queueWorld();
    const task = await enqueue(world.database.db, FILL, { ...base, payload: { n: 3 } });
    expect(task).toMatchObject({ status: "pending", priority: 3, maxAttempts: 3, attempts: 0, progress: { last_processed_pk: null, rows_processed: 0 } });
    const catalog = new TaskCatalog();
    catalog.register(FILL, {
      timeoutMs: 5_000,
      handler: async ({ payload, checkpoint }) => {
        for (let i = 1; i <= payload.n; i++) await checkpoint({ last_processed_pk: String(i), rows_processed: i });
      },
    });
    await using runner = runnerFor(world.database, catalog);
    runner.start();
    const done = await eventually(async () => ((await taskRow(world.database, task.id)).status === "completed" ? taskRow(world.database, task.id) : null));
    expect(done).toMatchObject({ attempts: 1, lockedBy: null, lockedUntil: null, lastError: null, progress: { last_processed_pk: "3", rows_processed: 3 } });
    expect(done.finishedAt).not.toBeNull();
  });

  test("a retryable error is retried with back-off and can then succeed", async () => {
    await using world = await queueWorld();
    const task = await enqueue(world.database.db, FILL, { ...base, payload: { n: 0 } });
    let runs = 0;
    const catalog = new TaskCatalog();
    catalog.register(FILL, {
      timeoutMs: 5_000,
      handler: async () => {
        if (++runs < 3) throw new DriverError("provider answered 503", { retryable: true });
      },
    });
    await using runner = runnerFor(world.database, catalog);
    runner.start();
    await eventually(async () => (await taskRow(world.database, task.id)).status === "completed");
    expect(runs).toBe(3);
    expect((await taskRow(world.database, task.id)).attempts).toBe(3);
  });

  test("tasks of types this process has no handler for are left alone", async () => {
    await using world = await queueWorld();
    const other = await enqueue<unknown>(world.database.db, DELETION, { ...base, payload: {} });
    const mine = await enqueue(world.database.db, FILL, { ...base, payload: { n: 1 } });
    const catalog = new TaskCatalog();
    catalog.register(FILL, { timeoutMs: 5_000, handler: async () => {} });
    await using runner = runnerFor(world.database, catalog);
    runner.start();
    await eventually(async () => (await taskRow(world.database, mine.id)).status === "completed");
    expect((await taskRow(world.database, other.id)).status).toBe("pending");
  });
});

describe("errors", () => {
  test("a handler that keeps failing ends failed after max_attempts with last_error", async () => {
    await using world = await queueWorld();
    const task = await enqueue(world.database.db, FILL, { ...base, payload: { n: 1 } });
    let runs = 0;
    const catalog = new TaskCatalog();
    catalog.register(FILL, {
      timeoutMs: 5_000,
      handler: async () => {
        runs++;
        throw new Error(`source unreachable (run ${runs})`);
      },
    });
    await using runner = runnerFor(world.database, catalog);
    runner.start();
    const row = await eventually(async () => ((await taskRow(world.database, task.id)).status === "failed" ? taskRow(world.database, task.id) : null));
    expect(runs).toBe(3);
    expect(row).toMatchObject({ attempts: 3, maxAttempts: 3, lastError: "source unreachable (run 3)", lockedBy: null });
    expect(row.finishedAt).not.toBeNull();
  });

  test.each([
    ["an AppError", new AppError("not_found", "vector table not found")],
    ["a non-retryable DriverError", new DriverError("authentication failed for user", { retryable: false })],
  ])("%s fails the task at once", async (_, error) => {
    await using world = await queueWorld();
    const task = await enqueue(world.database.db, DELETION, { ...base, payload: { n: 1 } });
    const catalog = new TaskCatalog();
    catalog.register(DELETION, { timeoutMs: 5_000, handler: async () => { throw error; } });
    await using runner = runnerFor(world.database, catalog);
    runner.start();
    const row = await eventually(async () => ((await taskRow(world.database, task.id)).status === "failed" ? taskRow(world.database, task.id) : null));
    expect(row).toMatchObject({ attempts: 1, maxAttempts: 5, lastError: error.message });
  });

  test("a payload that does not match the schema fails without running the handler", async () => {
    await using world = await queueWorld();
    const task = await enqueue<unknown>(world.database.db, FILL, { ...base, payload: { n: "three" } });
    let ran = false;
    const catalog = new TaskCatalog();
    catalog.register(FILL, { timeoutMs: 5_000, handler: async () => void (ran = true) });
    await using runner = runnerFor(world.database, catalog);
    runner.start();
    const row = await eventually(async () => ((await taskRow(world.database, task.id)).status === "failed" ? taskRow(world.database, task.id) : null));
    expect(ran).toBe(false);
    expect(row.lastError).toStartWith("invalid payload: n must be a number");
  });

  test("a run past its timeout is aborted and counts as a failed attempt", async () => {
    await using world = await queueWorld();
    const task = await enqueue(world.database.db, FILL, { ...base, payload: { n: 1 }, maxAttempts: 2 });
    const catalog = new TaskCatalog();
    catalog.register(FILL, {
      timeoutMs: 50,
      handler: ({ signal }) => new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason))),
    });
    await using runner = runnerFor(world.database, catalog);
    runner.start();
    const row = await eventually(async () => ((await taskRow(world.database, task.id)).status === "failed" ? taskRow(world.database, task.id) : null));
    expect(row).toMatchObject({ attempts: 2, lastError: "the run timed out after 50 ms" });
  });

  test("a checkpoint inside a transaction that rolls back leaves progress as it was", async () => {
    await using world = await queueWorld();
    const db = world.database.db;
    await world.database.client.execute("CREATE TABLE side_rows (pk INTEGER PRIMARY KEY)");
    const task = await enqueue(db, FILL, { ...base, payload: { n: 1 }, maxAttempts: 1 });
    const catalog = new TaskCatalog();
    catalog.register(FILL, {
      timeoutMs: 5_000,
      handler: async ({ checkpoint }) => {
        await db.transaction(async (tx) => {
          await tx.run(sql`INSERT INTO side_rows (pk) VALUES (1)`);
          await checkpoint({ last_processed_pk: "1", rows_processed: 1 }, tx);
          throw new Error("embedding failed mid-batch");
        });
      },
    });
    await using runner = runnerFor(world.database, catalog);
    runner.start();
    const row = await eventually(async () => ((await taskRow(world.database, task.id)).status === "failed" ? taskRow(world.database, task.id) : null));
    expect(row.progress).toEqual({ last_processed_pk: null, rows_processed: 0 });
    expect((await world.database.client.execute("SELECT count(*) AS n FROM side_rows")).rows[0]!.n).toBe(0);
  });
});

describe("leases", () => {
  test("a task whose lease expired is claimed again and resumes from its progress", async () => {
    await using world = await queueWorld();
    const db = world.database.db;
    const task = await enqueue(db, FILL, { ...base, payload: { n: 10 } });
    // A worker that claims, checkpoints, and then "dies" (never heartbeats again).
    const dead = await claimNext(db, { workerId: "dead-worker", types: ["backfill"], now: new Date(), leaseMs: 100 });
    expect(dead?.id).toBe(task.id);
    await world.database.client.execute({ sql: "UPDATE tasks SET progress = ? WHERE id = ?", args: [JSON.stringify({ last_processed_pk: "4", rows_processed: 4 }), task.id] });
    expect(await claimNext(db, { workerId: "eager", types: ["backfill"], now: new Date(), leaseMs: 100 })).toBeNull();
    const resumedFrom: unknown[] = [];
    const catalog = new TaskCatalog();
    catalog.register(FILL, { timeoutMs: 5_000, handler: async ({ progress }) => void resumedFrom.push(progress) });
    await Bun.sleep(120);
    await using runner = runnerFor(world.database, catalog);
    runner.start();
    await eventually(async () => (await taskRow(world.database, task.id)).status === "completed");
    expect(resumedFrom).toEqual([{ last_processed_pk: "4", rows_processed: 4 }]);
    expect((await taskRow(world.database, task.id)).attempts).toBe(2);
  });

  test("a task that died on its last attempt is failed, not run again", async () => {
    await using world = await queueWorld();
    const db = world.database.db;
    const task = await enqueue(db, FILL, { ...base, payload: { n: 1 }, maxAttempts: 1 });
    await claimNext(db, { workerId: "dead-worker", types: ["backfill"], now: new Date(), leaseMs: 1 });
    await Bun.sleep(5);
    let ran = false;
    const catalog = new TaskCatalog();
    catalog.register(FILL, { timeoutMs: 5_000, handler: async () => void (ran = true) });
    await using runner = runnerFor(world.database, catalog);
    runner.start();
    const row = await eventually(async () => ((await taskRow(world.database, task.id)).status === "failed" ? taskRow(world.database, task.id) : null));
    expect(ran).toBe(false);
    expect(row.lastError).toBe("attempt 1 stopped without finishing (its worker died); 1 of 1 runs in a row saved no progress");
  });
});

describe("exclusive keys", () => {
  test("a second unfinished task with the same key is refused by the database; a finished one frees the key", async () => {
    await using app = await createTestApp();
    const db = app.services.database.db;
    const first = await enqueue<unknown>(db, FILL, { orgId: "o", targetId: "vt", payload: {}, exclusiveKey: "backfill:vt" });
    const attempts = await Promise.allSettled(Array.from({ length: 20 }, () => enqueue<unknown>(db, REFILL, { orgId: "o", targetId: "vt", payload: {}, exclusiveKey: "backfill:vt" })));
    expect(attempts.every((a) => a.status === "rejected" && isUniqueViolation(a.reason))).toBe(true);
    await enqueue<unknown>(db, FILL, { orgId: "o", targetId: "other", payload: {}, exclusiveKey: "backfill:other" });
    await db.update(tasks).set({ status: "completed" }).where(eq(tasks.id, first.id));
    const again = await enqueue<unknown>(db, FILL, { orgId: "o", targetId: "vt", payload: {}, exclusiveKey: "backfill:vt" });
    expect(again.status).toBe("pending");
  });
});
