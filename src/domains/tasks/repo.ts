import { and, count, desc, eq, gte, inArray, or, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { tasks } from "../../scheduler/tables.ts";
import type { TaskRow } from "../../scheduler/types.ts";
import type { ListTasks } from "./schemas.ts";

/** An organization's active tasks and those finished since `finishedSince`, newest first. */
export async function listActiveAndRecent(db: Db, orgId: string, finishedSince: Date, filters: ListTasks): Promise<TaskRow[]> {
  const conditions: (SQL | undefined)[] = [
    eq(tasks.orgId, orgId),
    or(inArray(tasks.status, ["pending", "running"]), gte(tasks.finishedAt, finishedSince.toISOString())),
    filters.status ? eq(tasks.status, filters.status) : undefined,
    filters.task_type ? eq(tasks.taskType, filters.task_type) : undefined,
    filters.target_id ? eq(tasks.targetId, filters.target_id) : undefined,
  ];
  return db.select().from(tasks).where(and(...conditions)).orderBy(desc(tasks.createdAt), desc(tasks.id));
}

export async function findTask(db: Db, orgId: string, id: string): Promise<TaskRow | undefined> {
  const [row] = await db.select().from(tasks).where(and(eq(tasks.id, id), eq(tasks.orgId, orgId)));
  return row;
}

/** Every task of the service counted by type and status (the `vecsync_tasks` gauge, docs/operability.md#metrics). */
export async function countTasksByTypeAndStatus(db: Db): Promise<{ task_type: string; status: string; count: number }[]> {
  return db.select({ task_type: tasks.taskType, status: tasks.status, count: count() }).from(tasks).groupBy(tasks.taskType, tasks.status);
}
