// docs/api.md#tasks as changed by issue 12: a task fails for good after max_attempts runs in a row that
// made no progress; the failed-for-good hook runs in the transaction that fails the task, by every
// path; ctx.complete(tx) commits the task's completion with the handler's own write.
import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { TaskCatalog, type TaskFailure } from "../../src/scheduler/catalog.ts";
import { enqueue } from "../../src/scheduler/enqueue.ts";
import type { DbOrTx } from "../../src/scheduler/types.ts";
import { eventually } from "../harness.ts";
import { deadRun, FILL, queueWorld, runnerFor, taskRow, type QueueWorld } from "./helpers.ts";

const base = { orgId: "org1", targetId: "t1", payload: { n: 1 } };
const at = (rows: number) => ({ last_processed_pk: String(rows), rows_processed: rows });

/** A side table the hooks write, to check they share the failing transaction. */
async function failuresTable(world: QueueWorld): Promise<(tx: DbOrTx, f: TaskFailure) => Promise<void>> {
  await world.database.client.execute("CREATE TABLE failures (task_id TEXT, error TEXT)");
  return async (tx, f) => void (await tx.run(sql`INSERT INTO failures (task_id, error) VALUES (${f.task.id}, ${f.error})`));
}

const failuresOf = async (world: QueueWorld) => (await world.database.client.execute("SELECT task_id, error FROM failures")).rows.map((r) => [r.task_id, r.error]);

describe("happy", () => {
  test("a task whose worker died four times, each run after saving progress, still runs and completes", async () => {
    await using world = await queueWorld();
    const task = await enqueue(world.database.db, FILL, base);
    for (const rows of [100, 200, 300, 400]) await deadRun(world.database, task.id, at(rows));
    expect(await taskRow(world.database, task.id)).toMatchObject({ attempts: 4, stalledRuns: 0, maxAttempts: 3 });
    const resumedFrom: unknown[] = [];
    const catalog = new TaskCatalog();
    catalog.register(FILL, { timeoutMs: 5_000, handler: async ({ progress }) => void resumedFrom.push(progress) });
    await using runner = runnerFor(world.database, catalog);
    runner.start();
    await eventually(async () => (await taskRow(world.database, task.id)).status === "completed");
    expect(resumedFrom).toEqual([at(400)]);
    expect((await taskRow(world.database, task.id)).attempts).toBe(5);
  });

  test("a handler that fails after each checkpoint keeps being retried; it fails for good after 3 runs in a row without progress", async () => {
    await using world = await queueWorld();
    const task = await enqueue(world.database.db, FILL, base);
    const onFailed = await failuresTable(world);
    let runs = 0;
    const catalog = new TaskCatalog();
    catalog.register(FILL, {
      timeoutMs: 5_000,
      onFailed,
      handler: async ({ progress, checkpoint }) => {
        runs++;
        // Five runs that get somewhere, then none does.
        if (runs <= 5) await checkpoint(at(progress.rows_processed + 10));
        throw new Error(`source dropped the connection (run ${runs})`);
      },
    });
    await using runner = runnerFor(world.database, catalog);
    runner.start();
    const row = await eventually(async () => ((await taskRow(world.database, task.id)).status === "failed" ? taskRow(world.database, task.id) : null));
    expect(runs).toBe(8);
    expect(row).toMatchObject({ attempts: 8, stalledRuns: 3, progress: at(50), lastError: "source dropped the connection (run 8)" });
    expect(await failuresOf(world)).toEqual([[task.id, "source dropped the connection (run 8)"]]);
  });

  test("ctx.complete(tx) completes the task in the handler's transaction; a rollback undoes both", async () => {
    await using world = await queueWorld();
    const db = world.database.db;
    await world.database.client.execute("CREATE TABLE results (n INTEGER)");
    const first = await enqueue(db, FILL, { ...base, payload: { n: 1 } });
    const second = await enqueue(db, FILL, { ...base, payload: { n: 2 }, maxAttempts: 1 });
    const seen: string[] = [];
    const catalog = new TaskCatalog();
    catalog.register(FILL, {
      timeoutMs: 5_000,
      handler: async ({ payload, task, complete }) => {
        await db
          .transaction(async (tx) => {
            await complete(tx);
            seen.push((await tx.all<{ status: string }>(sql`SELECT status FROM tasks WHERE id = ${task.id}`))[0]!.status);
            await tx.run(sql`INSERT INTO results (n) VALUES (${payload.n})`);
            if (payload.n === 2) throw new Error("the table update found the configuration moved");
          })
          .catch((err) => {
            if (payload.n === 2) throw err;
          });
      },
    });
    await using runner = runnerFor(world.database, catalog, { workers: 1 });
    runner.start();
    await eventually(async () => (await taskRow(world.database, second.id)).status === "failed");
    expect(seen).toEqual(["completed", "completed"]);
    expect((await taskRow(world.database, first.id)).status).toBe("completed");
    expect((await world.database.client.execute("SELECT n FROM results")).rows.map((r) => r.n)).toEqual([1]);
  });
});

describe("errors", () => {
  test("runs that die without saving progress: the claim after the third fails the task without running it, with the hook", async () => {
    await using world = await queueWorld();
    const task = await enqueue(world.database.db, FILL, base);
    const onFailed = await failuresTable(world);
    await deadRun(world.database, task.id, at(100)); // progress: does not count
    for (let i = 0; i < 3; i++) await deadRun(world.database, task.id, null);
    let ran = false;
    const catalog = new TaskCatalog();
    catalog.register(FILL, { timeoutMs: 5_000, onFailed, handler: async () => void (ran = true) });
    await using runner = runnerFor(world.database, catalog);
    runner.start();
    const row = await eventually(async () => ((await taskRow(world.database, task.id)).status === "failed" ? taskRow(world.database, task.id) : null));
    expect(ran).toBe(false);
    const error = "attempt 4 stopped without finishing (its worker died); 3 of 3 runs in a row saved no progress";
    expect(row).toMatchObject({ attempts: 5, lastError: error, progress: at(100) });
    expect(await failuresOf(world)).toEqual([[task.id, error]]);
  });

  test("a hook that throws rolls the failure back: the task is not left failed without its hook's write", async () => {
    await using world = await queueWorld();
    const task = await enqueue(world.database.db, FILL, { ...base, maxAttempts: 1 });
    let hookCalls = 0;
    const catalog = new TaskCatalog();
    catalog.register(FILL, {
      timeoutMs: 5_000,
      onFailed: async () => {
        hookCalls++;
        throw new Error("hook write failed");
      },
      handler: async () => {
        throw new Error("provider refused the model");
      },
    });
    await using runner = runnerFor(world.database, catalog, { leaseMs: 60_000 });
    runner.start();
    await eventually(() => hookCalls === 1);
    await runner.stop();
    expect((await taskRow(world.database, task.id)).status).not.toBe("failed");
  });
});
