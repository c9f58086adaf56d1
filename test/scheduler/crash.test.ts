// docs/api.md#tasks: a task whose process died is claimed again and resumes from its checkpoint, never
// from zero; `attempts` counts both runs. On the same host the dead pid is recognised, so the
// restarted worker does not wait for the lease to run out.
import { describe, expect, test, setDefaultTimeout } from "bun:test";
import { join } from "node:path";
import { TaskCatalog } from "../../src/scheduler/catalog.ts";
import { enqueue } from "../../src/scheduler/enqueue.ts";
import type { TaskProgress } from "../../src/scheduler/types.ts";
import { BUN, eventually } from "../harness.ts";
import { CRASH_FILL, CRASH_ROWS_DDL, registerCheckpointing } from "./fixtures/checkpointing-handler.ts";
import { queueWorld, runnerFor, taskRow } from "./helpers.ts";

// Starts processes or databases: slower than bun's 5 s default on a loaded 2-core machine.
setDefaultTimeout(30_000);

const LEASE_MS = 20_000; // long, to show the restart does not wait for it
const ROWS = 30;

describe("crash", () => {
  test("a worker killed with SIGKILL mid-task is resumed from its checkpoint by another worker", async () => {
    await using world = await queueWorld();
    await world.database.client.execute(CRASH_ROWS_DDL);
    const task = await enqueue(world.database.db, CRASH_FILL, { orgId: "org1", targetId: "vt1", payload: { rows: ROWS } });

    const child = Bun.spawn([BUN, join(import.meta.dir, "fixtures/worker-process.ts"), world.url, String(LEASE_MS)], { stdout: "ignore", stderr: "pipe" });
    try {
      await eventually(async () => ((await taskRow(world.database, task.id)).progress as TaskProgress).rows_processed >= 5, 15_000);
    } finally {
      child.kill("SIGKILL");
      await child.exited;
    }
    const atKill = await taskRow(world.database, task.id);
    const done = (atKill.progress as TaskProgress).rows_processed;
    expect(atKill).toMatchObject({ status: "running", attempts: 1 });
    expect(done).toBeGreaterThanOrEqual(5);
    expect(done).toBeLessThan(ROWS);

    const resumes: { progress: TaskProgress; at: number }[] = [];
    const catalog = new TaskCatalog();
    registerCheckpointing(catalog, world.database.db, "parent", { rowDelayMs: 1, onStart: (progress) => resumes.push({ progress, at: Date.now() }) });
    await using runner = runnerFor(world.database, catalog, { leaseMs: LEASE_MS });
    runner.start();
    const finished = await eventually(async () => ((await taskRow(world.database, task.id)).status === "completed" ? taskRow(world.database, task.id) : null), 10_000);

    // Claimed without waiting out the dead worker's lease, and resumed exactly where it stopped.
    expect(resumes).toHaveLength(1);
    expect(resumes[0]!.at).toBeLessThan(Date.parse(atKill.lockedUntil!));
    expect(resumes[0]!.progress).toEqual({ last_processed_pk: String(done), rows_processed: done });
    expect(finished).toMatchObject({ attempts: 2, progress: { last_processed_pk: String(ROWS), rows_processed: ROWS } });
    const rows = await world.database.client.execute("SELECT run, count(*) AS n, min(pk) AS lo, max(pk) AS hi FROM crash_rows GROUP BY run ORDER BY run");
    expect(rows.rows.map((r) => ({ run: r.run, n: r.n, lo: r.lo, hi: r.hi }))).toEqual([
      { run: "child", n: done, lo: 1, hi: done },
      { run: "parent", n: ROWS - done, lo: done + 1, hi: ROWS },
    ]);
  });
});
