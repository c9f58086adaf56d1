// Fair share between organizations (src/scheduler/queue.ts, header): while another organization
// has a task waiting, an organization runs at most one long task (a fill); when none waits, it
// may use every worker. Handlers here start, say so, and end only when the test lets them, so
// every assertion is about a state that holds still; time is a fake clock.
import { describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { openDatabase, type Database } from "../../src/db/client.ts";
import { TaskCatalog, type TaskContext } from "../../src/scheduler/catalog.ts";
import { enqueue } from "../../src/scheduler/enqueue.ts";
import { claimNext } from "../../src/scheduler/queue.ts";
import { tasks } from "../../src/scheduler/tables.ts";
import type { TaskKind } from "../../src/scheduler/types.ts";
import { FakeClock } from "../../src/shared/clock.ts";
import { eventually } from "../harness.ts";
import { DELETION, FILL, REFILL, queueWorld, runnerFor, taskRow } from "./helpers.ts";

const T0 = Date.UTC(2026, 0, 1);
const at = (ms: number) => new Date(T0 + ms);
const LONG = [FILL.taskType, REFILL.taskType];
const ALL = [...LONG, DELETION.taskType];

/** Handlers held until released; `running` maps each started, unreleased task to its organization. */
function heldHandlers() {
  const running = new Map<string, string>();
  const releases = new Map<string, () => void>();
  const handler = ({ task, signal }: TaskContext<unknown>) =>
    new Promise<void>((resolve, reject) => {
      signal.addEventListener("abort", () => reject(signal.reason), { once: true }); // test end: the runner stops
      releases.set(task.id, resolve);
      running.set(task.id, task.orgId);
    });
  const release = (id: string) => {
    running.delete(id);
    releases.get(id)!();
  };
  return { running, handler, release };
}

function catalogOf(handler: (ctx: TaskContext<unknown>) => Promise<void>, long = true): TaskCatalog {
  const catalog = new TaskCatalog();
  for (const kind of [FILL, REFILL, DELETION] as TaskKind<unknown>[]) catalog.register(kind, { timeoutMs: 60_000, long: long && kind !== DELETION, handler });
  return catalog;
}

const enqueueAt = (db: Database["db"], kind: TaskKind<unknown>, orgId: string, ms: number) => enqueue(db, kind, { orgId, targetId: `vt_${orgId}_${ms}`, payload: { n: ms }, now: at(ms) });

describe("happy", () => {
  test("2 workers: another organization's fill starts beside the first fill, the second fill waits for it", async () => {
    await using world = await queueWorld();
    const db = world.database.db;
    const a1 = await enqueueAt(db, FILL, "org_a", 0);
    const a2 = await enqueueAt(db, FILL, "org_a", 1);
    const b1 = await enqueueAt(db, FILL, "org_b", 2);
    const held = heldHandlers();
    await using runner = runnerFor(world.database, catalogOf(held.handler), { workers: 2 }, new FakeClock(at(10)));
    runner.start();

    await eventually(() => held.running.size === 2);
    expect([...held.running.keys()].sort()).toEqual([a1.id, b1.id].sort());
    expect((await taskRow(world.database, a2.id)).status).toBe("pending");

    // B done, nobody else waiting: A's second fill takes the free worker beside its first.
    held.release(b1.id);
    await eventually(() => held.running.has(a2.id));
    expect([...held.running.keys()].sort()).toEqual([a1.id, a2.id].sort());
  });

  test("one organization alone uses every worker: both of its fills run at once", async () => {
    await using world = await queueWorld();
    const db = world.database.db;
    const a1 = await enqueueAt(db, FILL, "org_a", 0);
    const a2 = await enqueueAt(db, REFILL, "org_a", 1);
    const held = heldHandlers();
    await using runner = runnerFor(world.database, catalogOf(held.handler), { workers: 2 }, new FakeClock(at(10)));
    runner.start();
    await eventually(() => held.running.size === 2);
    expect([...held.running.keys()].sort()).toEqual([a1.id, a2.id].sort());
  });

  test("kinds not bound as long keep plain priority order", async () => {
    await using world = await queueWorld();
    const db = world.database.db;
    const a1 = await enqueueAt(db, FILL, "org_a", 0);
    const a2 = await enqueueAt(db, FILL, "org_a", 1);
    await enqueueAt(db, FILL, "org_b", 2);
    const held = heldHandlers();
    await using runner = runnerFor(world.database, catalogOf(held.handler, false), { workers: 2 }, new FakeClock(at(10)));
    runner.start();
    await eventually(() => held.running.size === 2);
    expect([...held.running.keys()].sort()).toEqual([a1.id, a2.id].sort());
  });
});

describe("concurrency", () => {
  test("two runners on separate connections never run two fills of one organization while the other's wait", async () => {
    await using world = await queueWorld();
    const second = await openDatabase(world.url);
    const db = world.database.db;
    const ids: string[] = [];
    // A's four fills are all older than B's: by priority and age alone A would take both workers.
    for (let i = 0; i < 4; i++) ids.push((await enqueueAt(db, FILL, "org_a", i)).id);
    for (let i = 0; i < 4; i++) ids.push((await enqueueAt(db, FILL, "org_b", 10 + i)).id);
    const held = heldHandlers();
    const catalog = catalogOf(held.handler);
    const clock = new FakeClock(at(100));
    const rounds: string[][] = [];
    {
      await using a = runnerFor(world.database, catalog, { workers: 1 }, clock);
      await using b = runnerFor(second, catalog, { workers: 1 }, clock);
      a.start();
      b.start();
      // Each round both workers claim at once, one in each process; then both are let go together.
      for (let left = ids.length; left > 0; left -= 2) {
        await eventually(() => held.running.size === 2);
        rounds.push([...held.running.values()].sort());
        for (const id of [...held.running.keys()]) held.release(id);
      }
      await eventually(async () => (await world.database.client.execute("SELECT count(*) AS n FROM tasks WHERE status = 'completed'")).rows[0]!.n === ids.length);
    }
    second.close();
    expect(rounds).toEqual(Array.from({ length: 4 }, () => ["org_a", "org_b"]));
  });
});

describe("the claim's order", () => {
  const claim = (db: Database["db"], nowMs: number) => claimNext(db, { workerId: crypto.randomUUID(), types: ALL, longTypes: LONG, now: at(nowMs), leaseMs: 30_000 });
  /** A task some worker holds, its lease ending at `untilMs`. */
  const runningAt = async (db: Database["db"], kind: TaskKind<unknown>, orgId: string, ms: number, untilMs: number) => {
    const row = await enqueueAt(db, kind, orgId, ms);
    await db.update(tasks).set({ status: "running", lockedBy: "elsewhere", lockedUntil: at(untilMs).toISOString() }).where(eq(tasks.id, row.id));
    return row;
  };

  test("a fill of an organization running one yields to another organization's task, whatever its priority", async () => {
    await using world = await queueWorld();
    const db = world.database.db;
    await runningAt(db, FILL, "org_a", 0, 60_000);
    const a2 = await enqueueAt(db, FILL, "org_a", 1);
    const b = await enqueueAt(db, DELETION, "org_b", 2); // priority 7 against the fill's 3
    expect((await claim(db, 10))?.id).toBe(b.id);
    expect((await claim(db, 10))?.id).toBe(a2.id);
  });

  test("an organization's own short tasks are not held back by its fill", async () => {
    await using world = await queueWorld();
    const db = world.database.db;
    await runningAt(db, FILL, "org_a", 0, 60_000);
    const deletion = await enqueueAt(db, DELETION, "org_a", 1);
    const b = await enqueueAt(db, FILL, "org_b", 2);
    expect((await claim(db, 10))?.id).toBe(b.id); // priority 3 before 7, as ever
    expect((await claim(db, 10))?.id).toBe(deletion.id);
  });

  test("a task in back-off is not waiting: the organization's second fill runs", async () => {
    await using world = await queueWorld();
    const db = world.database.db;
    await runningAt(db, FILL, "org_a", 0, 60_000);
    const a2 = await enqueueAt(db, FILL, "org_a", 1);
    const b = await enqueueAt(db, FILL, "org_b", 2);
    await db.update(tasks).set({ runAfter: at(5_000).toISOString() }).where(eq(tasks.id, b.id));
    expect((await claim(db, 10))?.id).toBe(a2.id);
    expect(await claim(db, 10)).toBeNull();
    expect((await claim(db, 5_000))?.id).toBe(b.id);
  });

  test("a fill whose lease expired counts as waiting, not running", async () => {
    await using world = await queueWorld();
    const db = world.database.db;
    const dead = await runningAt(db, FILL, "org_a", 0, 5); // its process died
    await enqueueAt(db, FILL, "org_a", 1);
    const b = await enqueueAt(db, FILL, "org_b", 2);
    expect((await claim(db, 10))?.id).toBe(dead.id);
    expect((await claim(db, 10))?.id).toBe(b.id);
  });

  test("when every waiting organization runs fills, the free worker goes to the one running fewest", async () => {
    await using world = await queueWorld();
    const db = world.database.db;
    await runningAt(db, FILL, "org_a", 0, 60_000);
    await runningAt(db, REFILL, "org_a", 1, 60_000);
    await runningAt(db, FILL, "org_b", 2, 60_000);
    const a3 = await enqueueAt(db, FILL, "org_a", 3);
    const b2 = await enqueueAt(db, FILL, "org_b", 4);
    const b3 = await enqueueAt(db, FILL, "org_b", 5);
    expect((await claim(db, 10))?.id).toBe(b2.id); // B runs 1, A runs 2
    expect((await claim(db, 10))?.id).toBe(a3.id); // 2 each: the older
    expect((await claim(db, 10))?.id).toBe(b3.id);
  });
});
