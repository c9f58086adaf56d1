// The queue's statements. Every state change after the claim is fenced by `locked_by`: a worker
// that lost its lease (it stalled past `locked_until` and another worker took the task) changes
// nothing, and its checkpoints throw so its own transaction rolls back.
//
// Fair share between organizations. A process runs 2 workers by default (VECSYNC_WORKERS) and a
// fill (backfill, rebackfill: the kinds bound as `long`) may run 6 h, so by priority and age alone
// one organization's two fills would hold every worker for hours while every other
// organization's tasks, its deletion included, waited behind them. So a claim ranks a long task by
// the long tasks its organization runs now (live leases, in every process), every other task 0,
// and takes the lowest rank first, before priority. An organization already running a fill thus
// starts no second one while another organization has a task waiting (pending and due, or its
// lease expired; a task in back-off is not waiting) that ranks 0, i.e. is not itself a further
// fill of a busy organization. When no such task waits it takes every free worker, so no worker
// idles while a task is due; when every waiting organization already runs fills, a free worker
// goes to the one running fewest. A running fill is never pre-empted: another organization's task
// waits for one running task to end, not behind a whole queue of fills.
import { and, eq, inArray, sql, type SQL } from "drizzle-orm";
import { tasks } from "./tables.ts";
import type { DbOrTx, TaskProgress, TaskRow } from "./types.ts";

/** Thrown by a checkpoint when another worker now holds the task. */
export class LeaseLostError extends Error {
  constructor(taskId: string) {
    super(`task ${taskId}: lease lost to another worker`);
    this.name = "LeaseLostError";
  }
}

const iso = (d: Date) => d.toISOString();
const plus = (d: Date, ms: number) => new Date(d.getTime() + ms).toISOString();
const held = (taskId: string, workerId: string) => and(eq(tasks.id, taskId), eq(tasks.lockedBy, workerId));

/**
 * Claims the next runnable task of the given types: pending and due, or running with an expired
 * lease (its worker died). Fair share first when `longTypes` are given (see the header), then
 * lowest priority, then oldest, then insertion order (rowid). One UPDATE … WHERE id = (SELECT …)
 * statement: SQLite and libSQL run it under the write lock, so two workers — in one process or in
 * several sharing the database — never claim the same task, and the fair-share count is read
 * from the rows every process's claims left, nothing kept in memory.
 * `attempts` counts runs, a resumed run included; `stalled_runs` counts this run as one without
 * progress until a checkpoint moves the task forward (docs/api.md#tasks).
 */
export async function claimNext(db: DbOrTx, opts: { workerId: string; types: readonly string[]; longTypes?: readonly string[]; now: Date; leaseMs: number }): Promise<TaskRow | null> {
  if (opts.types.length === 0) return null;
  const now = iso(opts.now);
  // Parenthesised whole: drizzle's and() does not wrap its operands, so a bare OR would escape it
  // and one claim would take every running task whose lease expired, of any type.
  const runnable = sql`((${tasks.status} = 'pending' AND ${tasks.runAfter} <= ${now}) OR (${tasks.status} = 'running' AND ${tasks.lockedUntil} < ${now}))`;
  const due = and(inArray(tasks.status, ["pending", "running"]), inArray(tasks.taskType, [...opts.types]), runnable);
  const next = opts.longTypes?.length
    ? fairShareNext(db, due, opts.longTypes, now)
    : db.select({ id: tasks.id }).from(tasks).where(due).orderBy(tasks.priority, tasks.createdAt, sql`rowid`).limit(1);
  const rows = await db
    .update(tasks)
    .set({
      status: "running",
      lockedBy: opts.workerId,
      lockedUntil: plus(opts.now, opts.leaseMs),
      attempts: sql`${tasks.attempts} + 1`,
      stalledRuns: sql`${tasks.stalledRuns} + 1`,
      updatedAt: now,
    })
    .where(and(sql`${tasks.id} = (${next})`, runnable))
    .returning();
  return rows[0] ?? null;
}

/**
 * The due task to claim under fair share (claimNext): the running long tasks are counted per
 * organization once (a handful of rows, found by the claim index's `status`), joined to the due
 * ones, and a long task ranks by its organization's count.
 */
function fairShareNext(db: DbOrTx, due: SQL | undefined, longTypes: readonly string[], now: string) {
  const busy = db
    .select({ orgId: tasks.orgId, fills: sql<number>`count(*)`.as("fills") })
    .from(tasks)
    .where(and(eq(tasks.status, "running"), sql`${tasks.lockedUntil} >= ${now}`, inArray(tasks.taskType, [...longTypes])))
    .groupBy(tasks.orgId)
    .as("busy");
  const rank = sql`CASE WHEN ${inArray(tasks.taskType, [...longTypes])} THEN coalesce(${busy.fills}, 0) ELSE 0 END`;
  return db
    .select({ id: tasks.id })
    .from(tasks)
    .leftJoin(busy, eq(busy.orgId, tasks.orgId))
    .where(due)
    .orderBy(rank, tasks.priority, tasks.createdAt, sql`${tasks}.rowid`)
    .limit(1);
}

/** Extends the lease; false when the task is no longer ours. */
export async function extendLease(db: DbOrTx, taskId: string, workerId: string, now: Date, leaseMs: number): Promise<boolean> {
  const rows = await db
    .update(tasks)
    .set({ lockedUntil: plus(now, leaseMs), updatedAt: iso(now) })
    .where(and(held(taskId, workerId), eq(tasks.status, "running")))
    .returning({ id: tasks.id });
  return rows.length > 0;
}

/**
 * Records progress (and extends the lease); in the handler's transaction when it passes one.
 * Progress is `rows_processed` moving forward: it clears `stalled_runs`, so neither this run nor
 * the ones before it count toward failing (docs/api.md#tasks). A checkpoint that restarts from zero (a
 * re-backfill starting a new generation) is not progress, or a task dying right after it would
 * never fail.
 */
export async function saveProgress(db: DbOrTx, taskId: string, workerId: string, progress: TaskProgress, now: Date, leaseMs: number): Promise<void> {
  const before = sql`coalesce(json_extract(${tasks.progress}, '$.rows_processed'), 0)`;
  const rows = await db
    .update(tasks)
    .set({
      progress,
      stalledRuns: sql`CASE WHEN ${progress.rows_processed} > ${before} THEN 0 ELSE ${tasks.stalledRuns} END`,
      lockedUntil: plus(now, leaseMs),
      updatedAt: iso(now),
    })
    .where(and(held(taskId, workerId), eq(tasks.status, "running")))
    .returning({ id: tasks.id });
  if (rows.length === 0) throw new LeaseLostError(taskId);
}

/** Answers whether the task was ours to complete (a completed or lost task is left alone). */
export async function markCompleted(db: DbOrTx, taskId: string, workerId: string, now: Date): Promise<boolean> {
  const rows = await db
    .update(tasks)
    .set({ status: "completed", lockedBy: null, lockedUntil: null, lastError: null, updatedAt: iso(now), finishedAt: iso(now) })
    .where(and(held(taskId, workerId), eq(tasks.status, "running")))
    .returning({ id: tasks.id });
  return rows.length > 0;
}

/** Answers whether the task was ours to fail: the failed-for-good hook runs only then. */
export async function markFailed(db: DbOrTx, taskId: string, workerId: string, error: string, now: Date): Promise<boolean> {
  const rows = await db
    .update(tasks)
    .set({ status: "failed", lockedBy: null, lockedUntil: null, lastError: error, updatedAt: iso(now), finishedAt: iso(now) })
    .where(and(held(taskId, workerId), eq(tasks.status, "running")))
    .returning({ id: tasks.id });
  return rows.length > 0;
}

/** Runs in a row without progress, this one included; null when the task is no longer ours. */
export async function stalledRunsOf(db: DbOrTx, taskId: string, workerId: string): Promise<number | null> {
  const [row] = await db.select({ stalledRuns: tasks.stalledRuns }).from(tasks).where(and(held(taskId, workerId), eq(tasks.status, "running")));
  return row?.stalledRuns ?? null;
}

/** Back to pending, not before `runAfter`, keeping the error for the tasks API. */
export async function scheduleRetry(db: DbOrTx, taskId: string, workerId: string, error: string, runAfter: Date, now: Date): Promise<void> {
  await db
    .update(tasks)
    .set({ status: "pending", lockedBy: null, lockedUntil: null, lastError: error, runAfter: iso(runAfter), updatedAt: iso(now) })
    .where(held(taskId, workerId));
}

/**
 * Hands a task back on shutdown: pending and due at once, and the interrupted run does not count
 * against `max_attempts` (it did not fail; the process is stopping).
 */
export async function releaseLease(db: DbOrTx, taskId: string, workerId: string, now: Date): Promise<void> {
  await db
    .update(tasks)
    .set({
      status: "pending",
      lockedBy: null,
      lockedUntil: null,
      runAfter: iso(now),
      attempts: sql`max(${tasks.attempts} - 1, 0)`,
      stalledRuns: sql`max(${tasks.stalledRuns} - 1, 0)`,
      updatedAt: iso(now),
    })
    .where(and(held(taskId, workerId), eq(tasks.status, "running")));
}

/**
 * Ends the leases of tasks whose holder was a process on this host that no longer exists, so a
 * service restarted after a crash resumes them at once instead of after the lease runs out.
 * A live pid (or one reused by another process) keeps its lease: the safe direction.
 */
export async function expireOrphanedLeases(db: DbOrTx, host: string, now: Date, isAlive: (pid: number) => boolean): Promise<string[]> {
  const running = await db
    .select({ id: tasks.id, lockedBy: tasks.lockedBy })
    .from(tasks)
    .where(and(eq(tasks.status, "running"), sql`${tasks.lockedBy} LIKE ${`${host}:%`}`));
  const orphaned = running.filter((t) => {
    const pid = Number(t.lockedBy?.slice(host.length + 1).split(":")[0]);
    return Number.isInteger(pid) && pid > 0 && !isAlive(pid);
  });
  for (const t of orphaned) {
    await db
      .update(tasks)
      .set({ lockedUntil: iso(now), updatedAt: iso(now) })
      .where(and(eq(tasks.id, t.id), eq(tasks.status, "running"), sql`${tasks.lockedBy} = ${t.lockedBy}`));
  }
  return orphaned.map((t) => t.id);
}

export function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
