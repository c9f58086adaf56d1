// The queue's statements. Every state change after the claim is fenced by `locked_by`: a worker
// that lost its lease (it stalled past `locked_until` and another worker took the task) changes
// nothing, and its checkpoints throw so its own transaction rolls back.
import { and, eq, inArray, sql } from "drizzle-orm";
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
 * lease (its worker died). Lowest priority first, then oldest, then insertion order (rowid). One
 * UPDATE … WHERE id = (SELECT …) statement: SQLite and libSQL run it under the write lock, so two
 * workers — in one process or in several sharing the database — never claim the same task.
 * `attempts` counts runs, a resumed run included; `stalled_runs` counts this run as one without
 * progress until a checkpoint moves the task forward (docs/api.md#tasks).
 */
export async function claimNext(db: DbOrTx, opts: { workerId: string; types: readonly string[]; now: Date; leaseMs: number }): Promise<TaskRow | null> {
  if (opts.types.length === 0) return null;
  const now = iso(opts.now);
  const runnable = sql`(${tasks.status} = 'pending' AND ${tasks.runAfter} <= ${now}) OR (${tasks.status} = 'running' AND ${tasks.lockedUntil} < ${now})`;
  const next = db
    .select({ id: tasks.id })
    .from(tasks)
    .where(and(inArray(tasks.status, ["pending", "running"]), inArray(tasks.taskType, [...opts.types]), runnable))
    .orderBy(tasks.priority, tasks.createdAt, sql`rowid`)
    .limit(1);
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
