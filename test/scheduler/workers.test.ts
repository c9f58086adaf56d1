import { describe, expect, test } from "bun:test";
import { openDatabase } from "../../src/db/client.ts";
import { TaskCatalog } from "../../src/scheduler/catalog.ts";
import { enqueue } from "../../src/scheduler/enqueue.ts";
import { TaskInterrupted } from "../../src/scheduler/runner.ts";
import { eventually } from "../harness.ts";
import { DELETION, FILL, queueWorld, runnerFor, taskRow } from "./helpers.ts";

const base = { orgId: "org1", targetId: "t1" };

describe("concurrency", () => {
  test("two runners on separate connections never run one task at once, and run each exactly once", async () => {
    await using world = await queueWorld();
    const second = await openDatabase(world.url);
    const ids = new Set<string>();
    for (let i = 0; i < 24; i++) ids.add((await enqueue(world.database.db, FILL, { ...base, payload: { n: i } })).id);
    const running = new Set<string>();
    const runsOf = new Map<string, number>();
    let overlaps = 0;
    const catalog = new TaskCatalog();
    catalog.register(FILL, {
      timeoutMs: 5_000,
      handler: async ({ task }) => {
        if (running.has(task.id)) overlaps++;
        running.add(task.id);
        runsOf.set(task.id, (runsOf.get(task.id) ?? 0) + 1);
        await Bun.sleep(5);
        running.delete(task.id);
      },
    });
    {
      await using a = runnerFor(world.database, catalog, { workers: 3 });
      await using b = runnerFor(second, catalog, { workers: 3 });
      a.start();
      b.start();
      await eventually(async () => {
        const rows = await world.database.client.execute("SELECT count(*) AS n FROM tasks WHERE status = 'completed'");
        return rows.rows[0]!.n === ids.size;
      });
    }
    second.close();
    expect(overlaps).toBe(0);
    expect([...runsOf.keys()].sort()).toEqual([...ids].sort());
    expect([...runsOf.values()].every((n) => n === 1)).toBe(true);
  });
});

describe("shutdown", () => {
  test("stop aborts the handler, keeps its checkpoint, and hands the task back without using an attempt", async () => {
    await using world = await queueWorld();
    const task = await enqueue(world.database.db, FILL, { ...base, payload: { n: 40 } });
    const starts: unknown[] = [];
    let reason: unknown = null;
    const catalog = new TaskCatalog();
    catalog.register(FILL, {
      timeoutMs: 30_000,
      handler: async ({ payload, progress, checkpoint, signal }) => {
        starts.push(progress);
        for (let i = progress.rows_processed + 1; i <= payload.n; i++) {
          if (signal.aborted) {
            reason = signal.reason;
            throw signal.reason;
          }
          await checkpoint({ last_processed_pk: String(i), rows_processed: i });
          await Bun.sleep(10);
        }
      },
    });
    const runner = runnerFor(world.database, catalog);
    runner.start();
    await eventually(async () => ((await taskRow(world.database, task.id)).progress as { rows_processed: number }).rows_processed >= 5);
    const began = Date.now();
    await runner.stop();
    expect(Date.now() - began).toBeLessThan(400); // the handler honoured the signal; no grace wait
    expect(reason).toBeInstanceOf(TaskInterrupted);
    expect((reason as TaskInterrupted).kind).toBe("shutdown");
    const released = await taskRow(world.database, task.id);
    expect(released).toMatchObject({ status: "pending", attempts: 0, lockedBy: null, lockedUntil: null });
    const saved = (released.progress as { rows_processed: number }).rows_processed;
    expect(saved).toBeGreaterThanOrEqual(5);

    // A restart claims it at once (no lease to wait out) and resumes where it stopped.
    await using restarted = runnerFor(world.database, catalog);
    restarted.start();
    await eventually(async () => (await taskRow(world.database, task.id)).status === "completed");
    expect(starts[1]).toEqual({ last_processed_pk: String(saved), rows_processed: saved });
    expect((await taskRow(world.database, task.id)).attempts).toBe(1);
  });

  test("a handler that ignores the signal is abandoned after the grace period and its task handed back", async () => {
    await using world = await queueWorld();
    const task = await enqueue(world.database.db, DELETION, { ...base, payload: { n: 1 } });
    const catalog = new TaskCatalog();
    const { promise: hang, resolve: release } = Promise.withResolvers<void>();
    catalog.register(DELETION, { timeoutMs: 30_000, handler: () => hang });
    const runner = runnerFor(world.database, catalog, { graceMs: 100 });
    runner.start();
    await eventually(async () => (await taskRow(world.database, task.id)).status === "running");
    const began = Date.now();
    await runner.stop();
    expect(Date.now() - began).toBeLessThan(1_000);
    expect(await taskRow(world.database, task.id)).toMatchObject({ status: "pending", attempts: 0, lockedBy: null });
    release(); // the abandoned handler finishing late changes nothing: it no longer holds the task
    await Bun.sleep(20);
    expect((await taskRow(world.database, task.id)).status).toBe("pending");
  });
});
